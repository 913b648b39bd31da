// A schedule's next runs, computed from a given now (no clock): `at` once, `every` on its grid from its start, `cron`
// in a time zone across a daylight-saving change as croner counts it; each bad field named.
import { describe, expect, it } from "vitest";
import { nextRunAfter, parseDuration, readTiming, TimingProblem } from "../../src/jobs/schedule-timing";

const t = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The next `count` runs from `now`, each the first after the one before. */
function runsFrom(timing: ReturnType<typeof readTiming>, now: number, count: number): (string | null)[] {
  const runs: (string | null)[] = [];
  let at: number | null = now;
  for (let i = 0; i < count && at !== null; i++) {
    at = nextRunAfter(timing, at);
    runs.push(iso(at));
  }
  return runs;
}

function problemOf(input: Parameters<typeof readTiming>[0], now = t("2026-03-01T00:00:00Z")) {
  try {
    readTiming(input, now);
  } catch (error) {
    if (error instanceof TimingProblem) return { param: error.param, message: error.message };
    throw error;
  }
  return null;
}

describe("schedule timing", () => {
  it("runs an `at` schedule once, at its time, and never after", () => {
    const now = t("2026-03-01T00:00:00Z");
    const timing = readTiming({ at: "2026-03-02T09:30:00+01:00" }, now);
    expect(runsFrom(timing, now, 2)).toEqual(["2026-03-02T08:30:00.000Z", null]);
  });

  it("runs a cron schedule at 09:00 Berlin time on both sides of the change to summer time", () => {
    // Europe/Berlin moves from UTC+1 to UTC+2 at 01:00 UTC on 29 March 2026.
    const now = t("2026-03-27T12:00:00Z");
    const timing = readTiming({ cron: "0 9 * * *", timezone: "Europe/Berlin" }, now);
    expect(runsFrom(timing, now, 3)).toEqual([
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
  });

  it("runs a cron schedule whose time the change to summer time skips at the gap's end, once that day", () => {
    // 02:30 does not exist in New York on 8 March 2026 (02:00 becomes 03:00): croner runs it at 03:00 EDT.
    const now = t("2026-03-07T12:00:00Z");
    const timing = readTiming({ cron: "30 2 * * *", timezone: "America/New_York" }, now);
    expect(runsFrom(timing, now, 3)).toEqual([
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
      "2026-03-10T06:30:00.000Z",
    ]);
  });

  it("runs a cron schedule whose time the change back to winter time repeats once, not twice", () => {
    // 01:30 happens twice in New York on 1 November 2026 (02:00 EDT becomes 01:00 EST).
    const now = t("2026-10-31T12:00:00Z");
    const timing = readTiming({ cron: "30 1 * * *", timezone: "America/New_York" }, now);
    const days = runsFrom(timing, now, 3).map((run) => run?.slice(0, 10));
    expect(days).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
  });

  it("runs an `every` schedule on a grid from when it was made, in short and ISO 8601 forms", () => {
    const made = t("2026-03-01T10:00:00Z");
    expect(runsFrom(readTiming({ every: "15m" }, made), made, 2)).toEqual([
      "2026-03-01T10:15:00.000Z",
      "2026-03-01T10:30:00.000Z",
    ]);
    expect([parseDuration("PT1H30M"), parseDuration("1h30m"), parseDuration("1d"), parseDuration("P1M")]).toEqual([
      5_400_000,
      5_400_000,
      86_400_000,
      null,
    ]);
  });

  it("counts missed slots as one: the next run after a long gap is the first slot after now", () => {
    const made = t("2026-03-01T10:00:00Z");
    const timing = readTiming({ every: "1m" }, made);
    expect(iso(nextRunAfter(timing, t("2026-03-01T10:07:30Z")))).toBe("2026-03-01T10:08:00.000Z");
  });

  it("names the field that is wrong", () => {
    expect([
      problemOf({ cron: "0 9 * *" })?.param,
      problemOf({ cron: "0 25 * * *" })?.param,
      problemOf({ cron: "0 9 * * *", timezone: "Mars/Olympus" })?.param,
      problemOf({ at: "tomorrow" })?.param,
      problemOf({ at: "2026-02-01T00:00:00Z" })?.param,
      problemOf({ every: "30s" })?.param,
      problemOf({ every: "often" })?.param,
      problemOf({})?.param,
      problemOf({ cron: "0 9 * * *", every: "1h" })?.param,
    ]).toEqual(["cron", "cron", "timezone", "at", "at", "every", "every", "cron", "every"]);
    expect(problemOf({ every: "30s" })?.message).toBe("every must be at least a minute (1m) and at most 366 days.");
  });
});

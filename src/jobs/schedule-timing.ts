// When a schedule runs: its timing (a five-field cron expression in an IANA time zone, one ISO time, or a fixed
// interval) read from what a client sent, and the next run after a given moment. Pure functions of `now`, so the
// runner object, the routes and the tests compute the same times (daylight saving as croner handles it).
import { Cron } from "croner";
import { z } from "zod";

/** The shortest interval an `every` schedule may have. */
export const MIN_EVERY_MS = 60_000;
/** The longest: a year (a longer one is almost surely a typo, and `at` says "once" better). */
export const MAX_EVERY_MS = 366 * 24 * 3_600_000;

/** A schedule's timing as stored: which kind, its text as the client wrote it, the zone, and an interval's start. */
export const ScheduleTiming = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("cron"), cron: z.string(), timezone: z.string() }),
  z.object({ kind: z.literal("at"), at: z.string(), timezone: z.string() }),
  z.object({ kind: z.literal("every"), every: z.string(), timezone: z.string(), anchorAt: z.number() }),
]);
export type ScheduleTiming = z.infer<typeof ScheduleTiming>;

/** What is wrong with one field of a timing, for a 400 that names it. */
export class TimingProblem extends Error {
  constructor(
    readonly param: "cron" | "at" | "every" | "timezone",
    message: string,
  ) {
    super(message);
    this.name = "TimingProblem";
  }
}

/** Whether `zone` is an IANA time zone this runtime knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    // RangeError: not a zone the runtime's time zone database has.
    return false;
  }
}

const SHORT_DURATION = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;
const ISO_DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/**
 * An interval in milliseconds: short (`15m`, `1h`, `1h30m`, `1d`, `90s`) or ISO 8601 (`PT15M`, `PT1H30M`, `P1D`);
 * null when it is neither. Months and years are refused: their length varies (use `cron` for those).
 */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  const parts = SHORT_DURATION.exec(trimmed.toLowerCase()) ?? ISO_DURATION.exec(trimmed.toUpperCase());
  if (!parts || parts.slice(1).every((part) => part === undefined)) return null;
  const [days, hours, minutes, seconds] = parts.slice(1).map((part) => Number(part ?? 0));
  return (((days ?? 0) * 24 + (hours ?? 0)) * 60 + (minutes ?? 0)) * 60_000 + (seconds ?? 0) * 1000;
}

/** The cron expression as croner reads it; a TimingProblem naming `cron` when it is not five valid fields. */
function cronOf(expression: string, timezone: string): Cron {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new TimingProblem(
      "cron",
      `cron must have five fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1"; it has ${fields.length}.`,
    );
  }
  try {
    return new Cron(fields.join(" "), { timezone, paused: true });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new TimingProblem("cron", `cron is not a valid expression: ${why}.`);
  }
}

/** What a client sent of a timing: exactly one of cron, at, every, with a zone (UTC without one). */
export interface TimingInput {
  cron?: string | undefined;
  at?: string | undefined;
  every?: string | undefined;
  timezone?: string | undefined;
}

/**
 * The timing a client asked for, checked at `now`: exactly one of `cron`, `at`, `every`; a known zone; `at` in the
 * future; `every` between a minute and a year (it counts from `now`). Throws a TimingProblem naming the field.
 */
export function readTiming(input: TimingInput, now: number): ScheduleTiming {
  const timezone = input.timezone ?? "UTC";
  if (!isTimeZone(timezone)) {
    throw new TimingProblem(
      "timezone",
      `timezone must be an IANA time zone such as "Europe/Berlin" or "UTC"; "${timezone.slice(0, 64)}" is not one.`,
    );
  }
  const given = (["cron", "at", "every"] as const).filter((field) => input[field] !== undefined);
  if (given.length !== 1) {
    throw new TimingProblem(
      given[1] ?? "cron",
      given.length === 0
        ? "A schedule needs one of cron (five fields), at (an ISO time) or every (an interval such as 15m)."
        : `A schedule takes exactly one of cron, at or every; this one has ${given.join(" and ")}.`,
    );
  }
  if (input.cron !== undefined) {
    cronOf(input.cron, timezone);
    return { kind: "cron", cron: input.cron.trim().split(/\s+/).join(" "), timezone };
  }
  if (input.at !== undefined) {
    const at = z.iso.datetime({ offset: true }).safeParse(input.at);
    if (!at.success) {
      throw new TimingProblem(
        "at",
        'at must be an ISO 8601 time with its offset or Z, e.g. "2026-12-01T09:00:00+01:00" or "2026-12-01T08:00:00Z".',
      );
    }
    if (Date.parse(at.data) <= now) {
      throw new TimingProblem("at", `at must be in the future; ${at.data} has passed.`);
    }
    return { kind: "at", at: new Date(Date.parse(at.data)).toISOString(), timezone };
  }
  const every = input.every ?? "";
  const ms = parseDuration(every);
  if (ms === null) {
    throw new TimingProblem(
      "every",
      'every must be an interval such as "15m", "1h", "1h30m", "1d" or ISO 8601 "PT15M"; months and years are not intervals (use cron).',
    );
  }
  if (ms < MIN_EVERY_MS || ms > MAX_EVERY_MS) {
    throw new TimingProblem("every", "every must be at least a minute (1m) and at most 366 days.");
  }
  return { kind: "every", every: every.trim(), timezone, anchorAt: now };
}

/**
 * The first run strictly after `now`, or null when there is none (an `at` that has passed). Runs that were missed
 * (the object was down) are not counted: the next is always after `now`, so a missed run happens once on wake-up.
 */
export function nextRunAfter(timing: ScheduleTiming, now: number): number | null {
  switch (timing.kind) {
    case "at": {
      const at = Date.parse(timing.at);
      return at > now ? at : null;
    }
    case "every": {
      const interval = parseDuration(timing.every) ?? MIN_EVERY_MS;
      const slots = Math.floor((now - timing.anchorAt) / interval) + 1;
      return timing.anchorAt + Math.max(1, slots) * interval;
    }
    case "cron": {
      const next = cronOf(timing.cron, timing.timezone).nextRun(new Date(now));
      return next ? next.getTime() : null;
    }
  }
}

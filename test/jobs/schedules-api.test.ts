// /context/schedules: created with its next run, listed, changed, disabled and deleted; each bad field refused with
// its name and nothing created; a member's schedules are theirs, an admin acts on the org's, another org sees none.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runnerOf, type ScheduleRunner } from "../../src/jobs/schedule-runner";
import type { Schedule } from "../../src/wire/schedule";
import { refuseD1Queries } from "../fixtures/d1-spy";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody } from "../fixtures/sessions";

const base = { name: "Monday report", prompt: "Summarise last week's changes." };

async function create(body: Record<string, unknown>, key: string = TEST_KEYS.chat.key): Promise<Schedule> {
  const { status, json } = await call("POST", "/context/schedules", body, key);
  if (status !== 201) throw new Error(`schedule not created (${status}): ${JSON.stringify(json)}`);
  return json as Schedule;
}

async function listed(key: string = TEST_KEYS.chat.key): Promise<string[]> {
  const { json } = await call("GET", "/context/schedules", undefined, key);
  return (json as { schedules: Schedule[] }).schedules.map((s) => s.scheduleId);
}

describe("schedules API", () => {
  it("creates a cron schedule in a time zone with its next run, and lists it with no run yet", async () => {
    const schedule = await create({ ...base, cron: "0 9 * * 1", timezone: "Europe/Berlin" });
    expect(schedule).toMatchObject({ cron: "0 9 * * 1", timezone: "Europe/Berlin", every: null, at: null });
    expect(schedule).toMatchObject({ mode: "general", enabled: true, user: "bob", lastRun: null });
    // Mondays at 09:00 in Berlin are 07:00 or 08:00 UTC.
    const next = new Date(schedule.nextRunAt ?? "");
    expect([next.getUTCDay(), [7, 8].includes(next.getUTCHours()), next.getTime() > Date.now()]).toEqual([
      1,
      true,
      true,
    ]);
    expect(await listed()).toContain(schedule.scheduleId);
    const state = await runInDurableObject(runnerOf(env, schedule.scheduleId), (runner: ScheduleRunner) =>
      runner.state(),
    );
    expect(state?.nextRunAt).toBe(Date.parse(schedule.nextRunAt ?? ""));
  });

  it("refuses each bad field with its name and creates nothing", async () => {
    const other = await createSession(undefined, TEST_KEYS.otherMember.key);
    const before = await listed();
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ ...base, name: " ", every: "1h" }, 400, "invalid_request", "name"],
      [{ ...base, prompt: "", every: "1h" }, 400, "invalid_request", "prompt"],
      [{ ...base, mode: "no-such-mode", every: "1h" }, 400, "unknown_mode", "mode"],
      [{ ...base, cron: "every monday" }, 400, "invalid_request", "cron"],
      [{ ...base, at: "2020-01-01T00:00:00Z" }, 400, "invalid_request", "at"],
      [{ ...base, every: "10s" }, 400, "invalid_request", "every"],
      [{ ...base, cron: "0 9 * * *", timezone: "Europe/Atlantis" }, 400, "invalid_request", "timezone"],
      [{ ...base }, 400, "invalid_request", "cron"],
      [{ ...base, every: "1h", at: "2030-01-01T00:00:00Z" }, 400, "invalid_request", "every"],
      [{ ...base, every: "1h", sessionId: other }, 404, "session_not_found", "sessionId"],
      [{ ...base, every: "1h", colour: "blue" }, 400, "unknown_field", "colour"],
    ];
    const answers = await Promise.all(cases.map(([body]) => call("POST", "/context/schedules", body)));
    expect(
      answers.map(({ status, json }) => {
        const { error } = json as ErrorBody;
        return [status, error.code, error.param];
      }),
    ).toEqual(cases.map(([, status, code, param]) => [status, code, param]));
    expect(JSON.stringify(answers[6]?.json)).toContain("Europe/Atlantis");
    expect(await listed()).toEqual(before);
  });

  it("disables a schedule (no next run) and enables it again", async () => {
    const schedule = await create({ ...base, every: "1h" });
    const off = await call("PATCH", `/context/schedules/${schedule.scheduleId}`, { enabled: false });
    expect((off.json as Schedule).nextRunAt).toBeNull();
    const on = await call("PATCH", `/context/schedules/${schedule.scheduleId}`, { enabled: true, every: "2h" });
    expect(on.json as Schedule).toMatchObject({ enabled: true, every: "2h" });
    expect(Date.parse((on.json as Schedule).nextRunAt ?? "") - Date.now()).toBeGreaterThan(3_600_000);
  });

  it("deletes a schedule and its runner's alarm", async () => {
    const schedule = await create({ ...base, every: "1h" });
    expect((await call("DELETE", `/context/schedules/${schedule.scheduleId}`)).status).toBe(200);
    expect((await call("GET", `/context/schedules/${schedule.scheduleId}`)).status).toBe(404);
    const runner = runnerOf(env, schedule.scheduleId);
    const alarm = await runInDurableObject(runner, (_: ScheduleRunner, state) => state.storage.getAlarm());
    expect(alarm).toBeNull();
  });

  it("keeps a member's schedule from other members and other orgs, and lets an admin of the org act on it", async () => {
    const schedule = await create({ ...base, every: "1h" });
    const path = `/context/schedules/${schedule.scheduleId}`;
    const outsiders = [TEST_KEYS.otherMember.key, TEST_KEYS.otherOrg.key];
    for (const key of outsiders) {
      const answers = await Promise.all([
        call("GET", path, undefined, key),
        call("PATCH", path, { enabled: false }, key),
        call("GET", `${path}/runs`, undefined, key),
        call("POST", `${path}/run`, undefined, key),
        call("DELETE", path, undefined, key),
      ]);
      expect(answers.map((a) => [a.status, (a.json as ErrorBody).error.code])).toEqual(
        Array(5).fill([404, "schedule_not_found"]),
      );
      expect(await listed(key)).not.toContain(schedule.scheduleId);
    }
    expect(await listed(TEST_KEYS.admin.key)).toContain(schedule.scheduleId);
    const renamed = await call("PATCH", path, { name: "Renamed by an admin" }, TEST_KEYS.admin.key);
    expect([renamed.status, (renamed.json as Schedule).name, (renamed.json as Schedule).user]).toEqual([
      200,
      "Renamed by an admin",
      "bob",
    ]);
  });

  it("arms no runner for a schedule whose row D1 did not take: a 500, and nothing left to run unseen", async () => {
    const { result, refused } = await refuseD1Queries(
      (sql) => sql.startsWith("INSERT INTO schedules"),
      () => call("POST", "/context/schedules", { ...base, every: "1h" }),
    );
    expect(result?.status).toBe(500);
    const scheduleId = String(refused[0]?.params[0]?.[0]);
    expect(scheduleId).toMatch(/^sch_/);
    const kept = await runInDurableObject(runnerOf(env, scheduleId), (runner: ScheduleRunner) => runner.state());
    expect(kept).toBeNull();
    expect(await listed()).not.toContain(scheduleId);
  });
});

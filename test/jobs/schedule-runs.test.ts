// Runs driven by each schedule's ScheduleRunner alarm (runDurableObjectAlarm; times in the object's storage moved into
// the past instead of waiting): a run is a turn in a new session titled by the schedule's name; an `at` runs once; a
// run missed while the object was down runs once on wake-up; a busy session's run waits, then is skipped with its
// reason; a run the budget refuses is recorded and publishes schedule.failed.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type RunnerState, runnerOf, type ScheduleRunner } from "../../src/jobs/schedule-runner";
import type { WebhookEvent } from "../../src/webhooks/events";
import type { Schedule, ScheduleRun } from "../../src/wire/schedule";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey } from "../passthrough/harness";

async function create(body: Record<string, unknown>, key: string = TEST_KEYS.chat.key): Promise<Schedule> {
  const { status, json } = await call("POST", "/context/schedules", body, key);
  if (status !== 201) throw new Error(`schedule not created (${status}): ${JSON.stringify(json)}`);
  return json as Schedule;
}

async function runsOf(scheduleId: string, key: string = TEST_KEYS.chat.key): Promise<ScheduleRun[]> {
  const { json } = await call("GET", `/context/schedules/${scheduleId}/runs`, undefined, key);
  return (json as { runs: ScheduleRun[] }).runs;
}

const runner = (scheduleId: string) => runnerOf(env, scheduleId);
const stateOf = (scheduleId: string) => runInDurableObject(runner(scheduleId), (r: ScheduleRunner) => r.state());

/** Changes what the runner keeps (a slot moved into the past, as if its time had come). */
async function changeState(scheduleId: string, change: (state: RunnerState) => RunnerState): Promise<void> {
  await runInDurableObject(runner(scheduleId), async (r: ScheduleRunner, state) => {
    const current = await r.state();
    if (!current) throw new Error(`the runner of ${scheduleId} keeps nothing`);
    await state.storage.put("state", change(current));
  });
}

/** Reads until `done` (a turn running on in its session), for at most 10 s. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const write = { name: "workspace_write_file", arguments: JSON.stringify({ path: "a.txt", content: "A" }) };

describe("schedule runs", () => {
  it("runs a due cron slot from the alarm as a turn in a new session titled by the schedule's name", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Here is your report." }]);
    const schedule = await create({
      name: "Berlin morning report",
      prompt: `Report please ${script.marker}`,
      cron: "0 9 * * *",
      timezone: "Europe/Berlin",
    });
    const due = Date.now() - 1_000;
    await changeState(schedule.scheduleId, (s) => ({ ...s, nextRunAt: due }));
    expect(await runDurableObjectAlarm(runner(schedule.scheduleId))).toBe(true);

    const [run] = await until(
      () => runsOf(schedule.scheduleId),
      (runs) => runs[0]?.status === "completed",
      "the run's turn to complete",
    );
    expect(run).toMatchObject({ trigger: "schedule", dueAt: new Date(due).toISOString(), reason: null });
    const { json } = await call("GET", "/context/sessions");
    const listed = (json as { sessions: { sessionId: string; title: string | null }[] }).sessions;
    expect(listed.find((s) => s.sessionId === run?.sessionId)?.title).toBe("Berlin morning report");
    // The next slot is 09:00 Berlin time again (07:00 or 08:00 UTC), in the future, mirrored in the list.
    const after = await call("GET", `/context/schedules/${schedule.scheduleId}`);
    const next = (after.json as Schedule).nextRunAt ?? "";
    expect([next === new Date((await stateOf(schedule.scheduleId))?.nextRunAt ?? 0).toISOString()]).toEqual([true]);
    expect([Date.parse(next) > Date.now(), ["07", "08"].includes(next.slice(11, 13))]).toEqual([true, true]);
    expect((after.json as Schedule).lastRun).toMatchObject({ status: "completed", turnId: run?.turnId });
  });

  it("runs an `at` schedule once, then has no next run and no alarm", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Done." }]);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const schedule = await create({ name: "Once", prompt: `Once ${script.marker}`, at });
    expect(schedule.nextRunAt).toBe(at);
    await changeState(schedule.scheduleId, (s) => ({
      ...s,
      timing: { kind: "at", at: new Date(Date.now() - 1_000).toISOString(), timezone: "UTC" },
      nextRunAt: Date.now() - 1_000,
    }));
    await runDurableObjectAlarm(runner(schedule.scheduleId));
    const runs = await until(
      () => runsOf(schedule.scheduleId),
      (r) => r[0]?.status === "completed",
      "the run",
    );
    expect(runs.length).toBe(1);
    expect((await stateOf(schedule.scheduleId))?.nextRunAt).toBeNull();
    const alarm = await runInDurableObject(runner(schedule.scheduleId), (_: ScheduleRunner, s) => s.storage.getAlarm());
    expect(alarm).toBeNull();
  });

  it("runs a run missed while the object was down once on wake-up, and the next slot after now", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Caught up." }], undefined, { repeat: true });
    const schedule = await create({ name: "Every minute", prompt: `Tick ${script.marker}`, every: "1m" });
    const now = Date.now();
    // Five slots passed while the object was down.
    await changeState(schedule.scheduleId, (s) => ({
      ...s,
      timing: { kind: "every", every: "1m", timezone: "UTC", anchorAt: now - 330_000 },
      nextRunAt: now - 270_000,
    }));
    await runInDurableObject(runner(schedule.scheduleId), (_: ScheduleRunner, state) => {
      state.abort("restarted by the test");
    }).catch(() => undefined);
    expect(await runDurableObjectAlarm(runner(schedule.scheduleId))).toBe(true);

    const runs = await until(
      () => runsOf(schedule.scheduleId),
      (r) => r[0]?.status === "completed",
      "the run",
    );
    expect(runs.map((r) => r.dueAt)).toEqual([new Date(now - 270_000).toISOString()]);
    const next = (await stateOf(schedule.scheduleId))?.nextRunAt ?? 0;
    expect([next > Date.now(), next - Date.now() <= 60_000, (next - (now - 330_000)) % 60_000]).toEqual([
      true,
      true,
      0,
    ]);
  });

  it("waits while the session it continues is busy, then skips the run with its reason at the next slot", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const sessionId = await createSession("workspace");
    expect((await sendMessage(sessionId, `write ${script.marker}`)).status).toBe("awaiting_approval");
    const schedule = await create({ name: "Follow up", prompt: "And now?", every: "1h", sessionId });
    const due = Date.now() - 1_000;
    await changeState(schedule.scheduleId, (s) => ({ ...s, nextRunAt: due }));

    await runDurableObjectAlarm(runner(schedule.scheduleId));
    const waiting = await stateOf(schedule.scheduleId);
    expect(waiting?.waiting).toMatchObject({ dueAt: due, sessionId });
    expect(await runsOf(schedule.scheduleId)).toEqual([]);
    // Tried again shortly, before the next slot: still busy, still waiting, nothing recorded.
    const retryAt = await runInDurableObject(runner(schedule.scheduleId), (_: ScheduleRunner, s) =>
      s.storage.getAlarm(),
    );
    expect((retryAt ?? 0) < (waiting?.nextRunAt ?? 0)).toBe(true);
    await runDurableObjectAlarm(runner(schedule.scheduleId));
    expect(await runsOf(schedule.scheduleId)).toEqual([]);

    // The next slot comes while the session still waits for its approval.
    await changeState(schedule.scheduleId, (s) => ({ ...s, nextRunAt: Date.now() - 1 }));
    await runDurableObjectAlarm(runner(schedule.scheduleId));
    const runs = await runsOf(schedule.scheduleId);
    expect(runs.map((r) => [r.status, r.dueAt, r.sessionId])).toEqual([
      ["skipped", new Date(due).toISOString(), sessionId],
    ]);
    expect(runs[0]?.reason).toMatch(
      /^session_awaiting_input: .*still busy at the next run, so this run was skipped\.$/,
    );
  });

  it("records a run the org's budget refuses, publishes schedule.failed, and keeps no empty session", async () => {
    const key = await newChatKey(`schedules-${crypto.randomUUID()}`, ["chat", "admin"]);
    const budget = await call("PUT", "/admin/budget", { tokensPerDay: 1 }, key.key);
    expect(budget.status).toBe(200);
    const schedule = await create({ name: "Too dear", prompt: "Write a long essay.", every: "1h" }, key.key);
    const published: WebhookEvent[] = [];
    await runInDurableObject(runner(schedule.scheduleId), (r: ScheduleRunner) => {
      r.publish = (event) => published.push(event);
    });
    await changeState(schedule.scheduleId, (s) => ({ ...s, nextRunAt: Date.now() - 1_000 }));
    await runDurableObjectAlarm(runner(schedule.scheduleId));

    const runs = await runsOf(schedule.scheduleId, key.key);
    expect(runs.map((r) => [r.status, r.sessionId, r.turnId])).toEqual([["failed", null, null]]);
    expect(runs[0]?.reason).toMatch(/^budget_exceeded: /);
    expect(published).toEqual([
      {
        type: "schedule.failed",
        org: key.org,
        user: "tester",
        sessionId: null,
        data: { scheduleId: schedule.scheduleId, name: "Too dear", reason: runs[0]?.reason },
      },
    ]);
    const sessions = await call("GET", "/context/sessions", undefined, key.key);
    expect((sessions.json as { sessions: unknown[] }).sessions).toEqual([]);
  });

  it("records a run whose creator's key was revoked as failed, naming why", async () => {
    const key = await newChatKey(`schedules-${crypto.randomUUID()}`, ["chat"]);
    const schedule = await create({ name: "Orphan", prompt: "hello", every: "1h" }, key.key);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z' WHERE id = ?").bind(key.keyId).run();
    const run = await runInDurableObject(runner(schedule.scheduleId), (r: ScheduleRunner) => r.runNow());
    expect([run?.status, run?.trigger, run?.reason]).toEqual([
      "failed",
      "manual",
      "api_key_revoked: the key that created this schedule was revoked.",
    ]);
  });
});

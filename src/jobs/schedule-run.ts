// One run of a schedule: a turn like any other, started as the schedule's creator (their org, user, admin role and
// the key that created it, so it is metered, budgeted and limited as their own turns are) through the session
// object's startTurn, in a new session titled by the schedule's name or in the session it continues. A run that
// cannot start is recorded with the reason and `schedule.failed` is published; a busy session is the caller's to
// retry (the runner waits for it).
import { z } from "zod";
import { keyStanding } from "../auth/api-keys";
import type { Db } from "../db";
import type { AdminLogger } from "../observability/admin-logger";
import { quoted } from "../quote";
import type { Caller } from "../session/caller";
import { createSession, sessionStubOrNull } from "../session/session-client";
import { indexSession } from "../session/session-index";
import type { WebhookEvent } from "../webhooks/events";
import type { ScheduleRun } from "../wire/schedule";
import { recordRun } from "./schedule-rows";

/**
 * What a run needs of its schedule, kept by its runner (written there at each create and change), so a run reads
 * nothing from D1 before it starts its turn but who it acts as.
 */
export const RunSpec = z.object({
  scheduleId: z.string(),
  org: z.string(),
  user: z.string(),
  keyId: z.string(),
  admin: z.boolean(),
  name: z.string(),
  mode: z.string(),
  prompt: z.string(),
  sessionId: z.string().nullable(),
});
export type RunSpec = z.infer<typeof RunSpec>;

/** A stored schedule's run spec. */
export function runSpecOf(schedule: RunSpec): RunSpec {
  const { scheduleId, org, user, keyId, admin, name, mode, prompt, sessionId } = schedule;
  return { scheduleId, org, user, keyId, admin, name, mode, prompt, sessionId };
}

export interface RunDeps {
  env: Cloudflare.Env;
  db: Db;
  logger: AdminLogger;
  /** publishEvent, or a test's stand-in. */
  publish: (event: WebhookEvent) => void;
  now: () => number;
}

/** The session refusals that mean "a turn is in progress there": the run waits for it (or, by hand, is skipped). */
const BUSY_CODES: ReadonlySet<string> = new Set(["session_busy", "session_awaiting_input"]);

export type RunAttempt =
  /** Recorded: the turn started, or the run failed (with its reason; schedule.failed was published). */
  | { kind: "recorded"; run: ScheduleRun }
  /** The session it continues has a turn in progress: nothing was recorded. */
  | { kind: "busy"; sessionId: string; reason: string };

/** The schedule's creator as a session object's caller. */
export function creatorOf(schedule: RunSpec): Caller {
  return {
    org: schedule.org,
    user: schedule.user,
    keyId: schedule.keyId,
    admin: schedule.admin,
    requestId: `schedule:${schedule.scheduleId}`,
  };
}

/**
 * Why the creator may no longer start turns (their key revoked or expired, they were disabled), or null; and whether
 * they are an admin now. A schedule made by an admin acts as one only while its creator still is: the key's scopes
 * narrowed or the person's admin group taken away, its runs act as a member (another member's session refuses them).
 */
async function creatorStanding(
  db: Db,
  schedule: RunSpec,
  now: number,
): Promise<{ problem: string | null; admin: boolean }> {
  const { problem, admin } = await keyStanding(db, schedule.org, schedule.user, schedule.keyId, now);
  const stillAdmin = schedule.admin && admin;
  switch (problem) {
    case "revoked":
      return { problem: "api_key_revoked: the key that created this schedule was revoked.", admin: stillAdmin };
    case "expired":
      return { problem: "api_key_expired: the key that created this schedule has expired.", admin: stillAdmin };
    case "user_disabled":
      return { problem: "user_disabled: the schedule's owner was disabled in their organization.", admin: stillAdmin };
    case null:
      return { problem: null, admin: stillAdmin };
  }
}

/**
 * The session of a run that starts a new one, made ahead of its slot (the runner does it a little before the run is
 * due, so the object, its storage and its schema are made before the due second, not in it): titled by the
 * schedule's name, and unlisted until its run lists it, so an empty session never shows in a person's list.
 */
export async function prepareSession(env: Cloudflare.Env, schedule: RunSpec): Promise<string> {
  const id = env.AGENT_SESSION.newUniqueId();
  const sessionId = id.toString();
  await env.AGENT_SESSION.get(id).initialize({
    sessionId,
    org: schedule.org,
    user: schedule.user,
    mode: schedule.mode,
    parentSessionId: null,
    title: schedule.name,
    unlisted: true,
  });
  return sessionId;
}

/** Deletes a session made ahead that no run will use (the schedule changed, was deleted, or its run failed). */
export async function discardPrepared(deps: RunDeps, schedule: RunSpec, sessionId: string): Promise<void> {
  const deleted = await sessionStubOrNull(deps.env, sessionId)?.deleteSession(creatorOf(schedule));
  if (!deleted?.ok) deps.logger.addError("[Schedule_Run]", "A session made ahead of its run was not deleted.", []);
}

/** Starts one run of `schedule`, due at `dueAt`; records it unless the session it continues is busy. */
export async function attemptRun(
  deps: RunDeps,
  schedule: RunSpec,
  dueAt: number,
  trigger: ScheduleRun["trigger"],
  /** The next run, written beside the record in one batch (the runner's; undefined: unchanged). */
  nextRunAt?: number | null,
  /** A new session's id when the runner made it ahead (prepareSession): the run lists it and starts its turn there. */
  prepared?: string | null,
): Promise<RunAttempt> {
  const standing = await creatorStanding(deps.db, schedule, deps.now());
  const caller: Caller = { ...creatorOf(schedule), admin: standing.admin };
  const base = {
    runId: `run_${crypto.randomUUID().replaceAll("-", "")}`,
    scheduleId: schedule.scheduleId,
    dueAt: new Date(dueAt).toISOString(),
    trigger,
  };
  const fail = async (reason: string, sessionId: string | null): Promise<RunAttempt> => {
    const run: ScheduleRun = {
      ...base,
      at: new Date(deps.now()).toISOString(),
      sessionId,
      turnId: null,
      status: "failed",
      reason,
    };
    await recordRun(deps.db, schedule.org, run, nextRunAt);
    deps.publish({
      type: "schedule.failed",
      org: schedule.org,
      user: schedule.user,
      sessionId,
      data: { scheduleId: schedule.scheduleId, name: schedule.name, reason, ...(sessionId ? { sessionId } : {}) },
    });
    return { kind: "recorded", run };
  };

  if (standing.problem) {
    if (prepared && schedule.sessionId === null) await discardPrepared(deps, schedule, prepared);
    return fail(standing.problem, schedule.sessionId);
  }

  let sessionId = schedule.sessionId;
  if (sessionId === null && prepared) {
    // Listed now, as its turn starts (the turn's own list updates need the row first).
    const { org, user, mode, name } = schedule;
    await indexSession(
      deps.db,
      { sessionId: prepared, org, user, mode, parentSessionId: null, title: name },
      deps.logger,
    );
    sessionId = prepared;
  } else if (sessionId === null) {
    // The mode is not read here: a mode gone from the catalog fails the turn, which says so (the run's status).
    const created = await createSession(deps.env, schedule, schedule.mode, undefined, undefined, schedule.name);
    sessionId = created.sessionId;
  }
  const stub = sessionStubOrNull(deps.env, sessionId);
  if (!stub) return fail(`session_not_found: the session ${quoted(sessionId)} is gone.`, sessionId);

  const started = await stub.startTurn(caller, { kind: "message", content: schedule.prompt });
  if (started.ok) {
    const run: ScheduleRun = {
      ...base,
      at: new Date(deps.now()).toISOString(),
      sessionId,
      turnId: started.value.turnId,
      status: "running",
      reason: null,
    };
    await recordRun(deps.db, schedule.org, run, nextRunAt);
    return { kind: "recorded", run };
  }
  const reason = `${started.code}: ${started.message}`;
  if (schedule.sessionId !== null && BUSY_CODES.has(started.code)) return { kind: "busy", sessionId, reason };
  if (schedule.sessionId === null) {
    // The run's own new session, refused before its first message (the budget, the key's limit): nothing to keep.
    const deleted = await stub.deleteSession(caller);
    if (!deleted.ok) deps.logger.addError("[Schedule_Run]", "The refused run's new session was not deleted.", []);
    return fail(reason, null);
  }
  return fail(reason, sessionId);
}

/** A run by hand (POST .../run) does not wait for a busy session: it is recorded as skipped. */
export async function skipRun(
  deps: RunDeps,
  schedule: RunSpec,
  dueAt: number,
  trigger: ScheduleRun["trigger"],
  busy: { sessionId: string; reason: string },
  nextRunAt?: number | null,
): Promise<ScheduleRun> {
  const run: ScheduleRun = {
    runId: `run_${crypto.randomUUID().replaceAll("-", "")}`,
    scheduleId: schedule.scheduleId,
    dueAt: new Date(dueAt).toISOString(),
    at: new Date(deps.now()).toISOString(),
    trigger,
    sessionId: busy.sessionId,
    turnId: null,
    status: "skipped",
    reason: busy.reason,
  };
  await recordRun(deps.db, schedule.org, run, nextRunAt);
  return run;
}

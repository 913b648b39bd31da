// One run of a schedule: a turn like any other, started as the schedule's creator (their org, user, admin role and
// the key that created it, so it is metered, budgeted and limited as their own turns are) through the session
// object's startTurn, in a new session titled by the schedule's name or in the session it continues. A run that
// cannot start is recorded with the reason and `schedule.failed` is published; a busy session is the caller's to
// retry (the runner waits for it).
import { keyStanding } from "../auth/api-keys";
import { isUserDisabled } from "../auth/users";
import type { Db } from "../db";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { quoted } from "../quote";
import type { Caller } from "../session/caller";
import { createSession, sessionStubOrNull } from "../session/session-client";
import type { WebhookEvent } from "../webhooks/events";
import type { ScheduleRun } from "../wire/schedule";
import { recordRun, type ScheduleRecord } from "./schedule-rows";

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
export function creatorOf(schedule: ScheduleRecord): Caller {
  return {
    org: schedule.org,
    user: schedule.user,
    keyId: schedule.keyId,
    admin: schedule.admin,
    requestId: `schedule:${schedule.scheduleId}`,
  };
}

/** Why the creator may no longer start turns (their key revoked or expired, they were disabled), or null. */
async function creatorProblem(db: Db, schedule: ScheduleRecord, now: number): Promise<string | null> {
  const standing = await keyStanding(db, schedule.org, schedule.keyId, now);
  if (standing === "revoked") return "api_key_revoked: the key that created this schedule was revoked.";
  if (standing === "expired") return "api_key_expired: the key that created this schedule has expired.";
  if (await isUserDisabled(db, schedule.org, schedule.user, now)) {
    return "user_disabled: the schedule's owner was disabled in their organization.";
  }
  return null;
}

/** Starts one run of `schedule`, due at `dueAt`; records it unless the session it continues is busy. */
export async function attemptRun(
  deps: RunDeps,
  schedule: ScheduleRecord,
  dueAt: number,
  trigger: ScheduleRun["trigger"],
): Promise<RunAttempt> {
  const caller = creatorOf(schedule);
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
    await recordRun(deps.db, schedule.org, run);
    deps.publish({
      type: "schedule.failed",
      org: schedule.org,
      user: schedule.user,
      sessionId,
      data: { scheduleId: schedule.scheduleId, name: schedule.name, reason, ...(sessionId ? { sessionId } : {}) },
    });
    return { kind: "recorded", run };
  };

  const problem = await creatorProblem(deps.db, schedule, deps.now());
  if (problem) return fail(problem, schedule.sessionId);

  let sessionId = schedule.sessionId;
  if (sessionId === null) {
    const catalog = new D1AgentModeCatalogService(deps.db, schedule.org);
    if (!(await catalog.getMode(schedule.mode))) {
      return fail(`unknown_mode: the mode ${quoted(schedule.mode)} is no longer in the catalog.`, null);
    }
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
    await recordRun(deps.db, schedule.org, run);
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
  schedule: ScheduleRecord,
  dueAt: number,
  trigger: ScheduleRun["trigger"],
  busy: { sessionId: string; reason: string },
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
  await recordRun(deps.db, schedule.org, run);
  return run;
}

// A run's record says `running` (or `paused`) when its turn started; the turn goes on in its session. Reading a run
// asks the session how its turn stands now and writes back what changed, so the list and the runs page show
// completed, failed or paused turns without the session having to know about schedules.
import type { Db } from "../db";
import { sessionStubOrNull } from "../session/session-client";
import type { RunStatus } from "../wire/schedule";
import { type ScheduleRecord, updateRunStatus } from "./schedule-rows";
import { creatorOf } from "./schedule-run";

const OPEN: ReadonlySet<RunStatus> = new Set(["running", "paused"]);

interface RunLike {
  sessionId: string | null;
  turnId: string | null;
  status: RunStatus;
  reason: string | null;
}

/** The run with its turn's status now (and the record updated when it moved on); as it was when the turn is gone. */
export async function refreshRun<R extends RunLike>(
  env: Cloudflare.Env,
  db: Db,
  schedule: ScheduleRecord,
  run: R,
  runId: string,
): Promise<R> {
  if (!OPEN.has(run.status) || run.sessionId === null || run.turnId === null) return run;
  const stub = sessionStubOrNull(env, run.sessionId);
  if (!stub) return run;
  const turn = await stub.turnStatus(creatorOf(schedule), run.turnId);
  if (!turn.ok) return run;
  const status = turn.value.status;
  const reason = turn.value.error ? `${turn.value.error.code}: ${turn.value.error.message}` : null;
  if (status === run.status && reason === run.reason) return run;
  await updateRunStatus(db, runId, status, reason);
  return { ...run, status, reason };
}

/** The schedule with its last run's status now. */
export async function refreshLastRun(env: Cloudflare.Env, db: Db, schedule: ScheduleRecord): Promise<ScheduleRecord> {
  const { lastRun, lastRunId } = schedule;
  if (!lastRun || !lastRunId) return schedule;
  return { ...schedule, lastRun: await refreshRun(env, db, schedule, lastRun, lastRunId) };
}

// Retention (SESSION_RETENTION_DAYS): the Worker's hourly cron deletes the sessions idle for longer, the longest idle
// first, at most SESSION_RETENTION_BATCH a run (the rest wait for the next run). Each session's own object decides
// by its own record (the list may lag it) and deletes itself as DELETE /context/sessions/:id does.
import { settings } from "../settings";
import { sessionStubOrNull } from "./session-client";
import { idleSessions, unindexSession } from "./session-index";

const DAY_MS = 86_400_000;

export interface RetentionRun {
  /** Sessions deleted (list entries of sessions gone already included). */
  deleted: number;
  /** Sessions the list called idle that changed since (their entries corrected), or whose turn runs. */
  kept: number;
}

/** One run: nothing when retention is off. `now` is the run's time (the cron's scheduled time). */
export async function expireIdleSessions(env: Cloudflare.Env, now: number): Promise<RetentionRun> {
  const { retentionDays, retentionBatch } = settings(env).sessions;
  const run: RetentionRun = { deleted: 0, kept: 0 };
  if (retentionDays === 0) return run;
  const cutoff = new Date(now - retentionDays * DAY_MS).toISOString();
  for (const sessionId of await idleSessions(env.DB, cutoff, retentionBatch)) {
    const stub = sessionStubOrNull(env, sessionId);
    if (stub) {
      run[await stub.expire(cutoff)] += 1;
    } else {
      // An entry whose id cannot be a session of this namespace has no object to delete.
      await unindexSession(env.DB, sessionId);
      run.deleted += 1;
    }
  }
  return run;
}

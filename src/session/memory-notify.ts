// Telling the sessions that may hold a copy of a person's memories (memory-copy.ts) that they changed: called by
// every writer of the memories table AFTER its change is committed and BEFORE its answer goes out, so the very next
// prompt of every session of that person reads them anew. An org-wide change (an org memory, the org's switch) tells
// the changer's own sessions so; every other member's are told just after the answer, in the request's waitUntil,
// so that an admin's change costs one request per live session of the org without waiting on them all.
// docs/memory.md, "The session's copy".
//
// Why the sessions found are enough: a copy is only ever read in the D1 batch that stamps the session's entry with
// its time (memory_copy_at, migrations/0033). A session whose copy was read after the change read the change (D1
// runs batches in order); one read before it, within the copy's life and a margin for clocks, is found here by that
// stamp and told; one read earlier holds an expired copy; one never stamped holds none.
import type { Db } from "../db";
import type { AdminLogger } from "../observability/admin-logger";
import { MEMORY_CACHE_TTL_MS } from "./memory-copy";
import { sessionsHoldingCopySince } from "./session-index";

/** How far the clocks of the session objects and of the writer may disagree. */
export const MEMORY_NOTIFY_SKEW_MS = 60_000;

/**
 * The most sessions one change tells (the newest written first): one request each, so a change costs at most this
 * many, whatever the org's size. A session past it keeps its copy until the copy's life ends (logged).
 */
export const MEMORY_NOTIFY_MAX = 500;

/** How many sessions are told at once (a Worker keeps at most six connections open at a time). */
export const MEMORY_NOTIFY_CONCURRENCY = 6;

export interface MemoryNotifyOptions {
  /** A session not to call (the one running the tool, which drops its own copy itself). */
  except?: string;
  now?: number;
  /**
   * For an org-wide change (`user` null): who made it, whose own sessions are told before the answer goes out, and
   * where the telling of every other member's goes on after it (the request's `waitUntil`), so an admin's change
   * does not wait on every session of the org.
   */
  actor?: { user: string; waitUntil: (work: Promise<unknown>) => void };
}

/**
 * Tells the sessions of `user` in `org` that may hold a copy (every member's, when `user` is null: an org memory or the
 * org's switch changed) to drop their copy. Each failed call is tried once more, then logged with the session's id
 * only; that session's copy then ends with its life (MEMORY_CACHE_TTL_MS).
 */
export async function notifyMemoryChange(
  env: Cloudflare.Env,
  db: Db,
  org: string,
  user: string | null,
  logger: AdminLogger,
  options: MemoryNotifyOptions = {},
): Promise<void> {
  const since = new Date((options.now ?? Date.now()) - MEMORY_CACHE_TTL_MS - MEMORY_NOTIFY_SKEW_MS).toISOString();
  let found: { sessionId: string; user: string }[];
  try {
    found = await sessionsHoldingCopySince(db, org, user, since, MEMORY_NOTIFY_MAX + 1);
  } catch (error) {
    // The change is made: it is answered, and the copies end with their life (MEMORY_CACHE_TTL_MS).
    logger.addException("[memory_notify]", error, [["Org", org]]);
    return;
  }
  if (found.length > MEMORY_NOTIFY_MAX) {
    logger.addException("[memory_notify]", new Error(`more than ${MEMORY_NOTIFY_MAX} sessions to tell`), [
      ["Org", org],
    ]);
  }
  const sessions = found.slice(0, MEMORY_NOTIFY_MAX).filter((session) => session.sessionId !== options.except);
  const actor = user === null ? options.actor : undefined;
  if (!actor) {
    await tellAll(env, sessions, logger);
    return;
  }
  await tellAll(
    env,
    sessions.filter((session) => session.user === actor.user),
    logger,
  );
  const others = sessions.filter((session) => session.user !== actor.user);
  if (others.length > 0) actor.waitUntil(tellAll(env, others, logger));
}

/** Tells each session, MEMORY_NOTIFY_CONCURRENCY at a time; never throws. */
async function tellAll(env: Cloudflare.Env, sessions: readonly { sessionId: string }[], logger: AdminLogger) {
  let next = 0;
  const worker = async () => {
    while (next < sessions.length) {
      const session = sessions[next++];
      if (session) await tell(env, session.sessionId, logger);
    }
  };
  await Promise.all(Array.from({ length: Math.min(MEMORY_NOTIFY_CONCURRENCY, sessions.length) }, worker));
}

async function tell(env: Cloudflare.Env, sessionId: string, logger: AdminLogger): Promise<void> {
  // Only sessions listed in D1, so an object that exists: the call never makes a new one. (Addressed here, not
  // through session-client.ts, which the session object's own modules may not import.)
  const stub = stubOf(env, sessionId, logger);
  if (!stub) return;
  try {
    await stub.memoriesChanged();
  } catch {
    try {
      await stub.memoriesChanged();
    } catch (error) {
      logger.addException("[memory_notify]", error, [["SessionId", sessionId]]);
    }
  }
}

/** The object of a listed session (null, logged, for an id that cannot be one). */
function stubOf(env: Cloudflare.Env, sessionId: string, logger: Pick<AdminLogger, "addException">) {
  try {
    return env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
  } catch (error) {
    logger.addException("[memory_notify]", error, [["SessionId", sessionId]]);
    return null;
  }
}

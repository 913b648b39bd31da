// Telling the sessions that may hold a copy of a person's memories (memory-copy.ts) that they changed: called by
// every writer of the memories table AFTER its change is committed and BEFORE its answer goes out, so the very next
// prompt of every session of that person reads them anew. docs/memory.md, "The session's copy".
//
// Why the sessions found are enough: a session whose list entry was written after the change read the memories after
// it (the same D1 batch, and D1 runs batches in order); one written before it, within the copy's life and a margin
// for clocks, is found here by its entry's updated_at and told; one written earlier holds an expired copy.
import type { Db } from "../db";
import type { AdminLogger } from "../observability/admin-logger";
import { MEMORY_CACHE_TTL_MS } from "./memory-copy";
import { sessionsWrittenSince } from "./session-index";

/** How far the clocks of the session objects and of the writer may disagree. */
export const MEMORY_NOTIFY_SKEW_MS = 60_000;

export interface MemoryNotifyOptions {
  /** A session not to call (the one running the tool, which drops its own copy itself). */
  except?: string;
  now?: number;
}

/**
 * Tells the recently written sessions of `user` in `org` (every member's, when `user` is null: an org memory or the
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
  let sessions: string[];
  try {
    sessions = await sessionsWrittenSince(db, org, user, since);
  } catch (error) {
    // The change is made: it is answered, and the copies end with their life (MEMORY_CACHE_TTL_MS).
    logger.addException("[memory_notify]", error, [["Org", org]]);
    return;
  }
  await Promise.all(
    sessions
      .filter((sessionId) => sessionId !== options.except)
      .map(async (sessionId) => {
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
      }),
  );
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

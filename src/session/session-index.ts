// The index of sessions by org (D1 `session_index`): written when a session's object is created, read to
// list a caller's recent sessions (the MCP door's resources). The session itself lives in its object.
import type { AdminLogger } from "../observability/admin-logger";

export interface IndexedSession {
  sessionId: string;
  mode: string;
  createdAt: string;
}

/** Records a new session; a failure is logged, never thrown (the session exists without its index row). */
export async function indexSession(
  db: D1Database,
  session: { sessionId: string; org: string; user: string; mode: string; parentSessionId: string | null },
  logger: AdminLogger,
): Promise<void> {
  try {
    await db
      .prepare(
        "INSERT OR IGNORE INTO session_index (session_id, org, user_id, mode, parent_session_id) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(session.sessionId, session.org, session.user, session.mode, session.parentSessionId)
      .run();
  } catch (error) {
    logger.addException("[session_index]", error, [["SessionId", session.sessionId]]);
  }
}

/** An org's newest sessions. */
export async function recentSessions(db: D1Database, org: string, limit = 50): Promise<IndexedSession[]> {
  const { results } = await db
    .prepare("SELECT session_id, mode, created_at FROM session_index WHERE org = ? ORDER BY created_at DESC LIMIT ?")
    .bind(org, limit)
    .all<{ session_id: string; mode: string; created_at: string }>();
  return results.map((r) => ({ sessionId: r.session_id, mode: r.mode, createdAt: r.created_at }));
}

// The rows of the search index (D1 `message_index`, migration 0032) that go with what they index: a session's
// (deleted by a person or by retention, in the same batch as its list entry: src/session/session-index.ts) and a
// person's (their deletion). The triggers of 0032 take each row's words out of the full-text index with it.
import type { Db } from "../db";

/** Deletes the index rows of a session's messages (run in the batch that deletes its list entry). */
export function unindexSessionMessages(db: Db, sessionId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM message_index WHERE session_id = ?").bind(sessionId);
}

/** Deletes the index rows of every message of a person in an org (run in the batch that deletes the person's data). */
export function unindexPersonMessages(db: Db, org: string, user: string): D1PreparedStatement {
  return db.prepare("DELETE FROM message_index WHERE org_id = ? AND user_id = ?").bind(org, user);
}

// The search index's SQL (D1 `message_index` and its full-text index `message_fts`, migration 0032): the rows a
// session's object writes (src/session/message-feed.ts), the page a search reads (message-search.ts), and the rows
// that go with what they index: a session's (deleted by a person or by retention, in the same batch as its list
// entry: src/session/session-index.ts) and a person's (their deletion). 0032's triggers keep `message_fts` in step.
import { z } from "zod";
import type { Db } from "../db";

/** One message as the feed writes it. */
export interface IndexedMessage {
  seq: number;
  role: "user" | "assistant";
  createdAt: string;
  text: string;
}

/**
 * Writes a session's messages (one statement, for the batch of its list entry). Inserted only while the session is
 * in the list (a write that lands after the session's deletion adds nothing back); a message indexed already is
 * left as it is.
 */
export function indexMessages(
  db: Db,
  session: { org: string; user: string; sessionId: string; owner: string; rows: readonly IndexedMessage[] },
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO message_index (org_id, user_id, session_id, seq, role, created_at, text, owner)
       SELECT ?1, ?2, ?3, json_extract(value, '$.seq'), json_extract(value, '$.role'),
         json_extract(value, '$.createdAt'), json_extract(value, '$.text'), ?4
       FROM json_each(?5) WHERE EXISTS (SELECT 1 FROM session_index WHERE session_id = ?3)`,
    )
    .bind(session.org, session.user, session.sessionId, session.owner, JSON.stringify(session.rows));
}

/** Deletes the index rows of a session's messages (run in the batch that deletes its list entry). */
export function unindexSessionMessages(db: Db, sessionId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM message_index WHERE session_id = ?").bind(sessionId);
}

/** Deletes the index rows of every message of a person in an org (run in the batch that deletes the person's data). */
export function unindexPersonMessages(db: Db, org: string, user: string): D1PreparedStatement {
  return db.prepare("DELETE FROM message_index WHERE org_id = ? AND user_id = ?").bind(org, user);
}

/**
 * Matches ranked by BM25 at most. A search that matches more of the person's messages answers with its newest
 * RANKED_MATCHES_MAX, newest first: BM25 tells such matches apart by little (the word is everywhere), and scoring
 * them costs FTS5 a walk over every row holding the word, whoever's (150 ms for a word in half of 200,000 messages
 * under `npm run bench:search`). Another word narrows it, and is ranked again.
 */
export const RANKED_MATCHES_MAX = 2000;

const PageRow = z.object({
  session_id: z.string(),
  title: z.string().nullable(),
  archived_at: z.string().nullable(),
  seq: z.number().int(),
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  created_at: z.string(),
  user_id: z.string(),
});

export type IndexPageRow = z.infer<typeof PageRow>;

/**
 * One page of a search: `newest` is the newest RANKED_MATCHES_MAX matches (FTS5 walks the doclists newest first
 * without scoring them); when it is full, the matches are ordered newest first from its oldest on, else all are
 * ranked by BM25 over the text (the owner column weighs nothing; the CASE calls bm25() only on that branch). The
 * page's ids are joined to their rows, whose org and person are checked as stored (the tokens are hashes), and to
 * the sessions' list entries (title, archived: a session not in the list is not found). `rows` and `skip` are
 * written into the statement, not bound: bound, SQLite plans the ranked page without them (measured in the Workers
 * runtime: 195 ms against 23 for the same rare word); the caller passes whole numbers.
 */
export async function readIndexPage(
  db: Db,
  page: { match: string; org: string; user: string | null; exceptSession: string | null; rows: number; skip: number },
): Promise<IndexPageRow[]> {
  if (!Number.isSafeInteger(page.rows) || !Number.isSafeInteger(page.skip)) {
    throw new Error(`A search page's rows and skip must be whole numbers (${page.rows}, ${page.skip}).`);
  }
  const { results } = await db
    .prepare(
      `WITH newest AS (
         SELECT rowid AS id FROM message_fts WHERE message_fts MATCH ?1 ORDER BY rowid DESC LIMIT ${RANKED_MATCHES_MAX}),
       ranked AS (
         SELECT rowid AS id,
           CASE WHEN (SELECT COUNT(*) FROM newest) >= ${RANKED_MATCHES_MAX} THEN -rowid ELSE bm25(message_fts, 0.0, 1.0) END AS score
         FROM message_fts
         WHERE message_fts MATCH ?1 AND rowid >= (SELECT COALESCE(MIN(id), 0) FROM newest)
           AND (?4 IS NULL OR rowid NOT IN (SELECT id FROM message_index WHERE session_id = ?4))
         ORDER BY score, rowid LIMIT ${page.rows} OFFSET ${page.skip})
       SELECT m.session_id, s.title, s.archived_at, m.seq, m.role, m.created_at, m.user_id, m.text
       FROM ranked
       JOIN message_index m ON m.id = ranked.id
       JOIN session_index s ON s.session_id = m.session_id AND s.org = m.org_id
       WHERE m.org_id = ?2 AND (?3 IS NULL OR m.user_id = ?3)
       ORDER BY ranked.score, ranked.id`,
    )
    .bind(page.match, page.org, page.user, page.exceptSession)
    .all();
  return results.map((row) => PageRow.parse(row));
}

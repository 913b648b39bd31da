// Search across a person's conversations (GET /context/search, the conversation_search tool): the messages of the
// index (migration 0032) that hold every word of the query, best first by BM25 over their text, a page at a time.
// A search is one person's (their token AND the words) or, for an org admin, the org's; the session's title comes
// from its list entry, and a message of a session that has none (deleted, or not listed yet) is never found.
import { z } from "zod";
import type { Db } from "../db";
import { orgToken, personToken } from "./owner-token";
import { matchExpression, searchWords } from "./search-query";
import { markedSnippet } from "./snippet";

/** Whose messages a search looks at: one person's in an org, or (an org admin's `all=true`) the whole org's. */
export type SearchScope = { org: string; user: string } | { org: string; all: true };

/** One message found, its snippet with the matches between SNIPPET_OPEN and SNIPPET_CLOSE (snippet.ts formats it). */
export interface MessageHit {
  sessionId: string;
  title: string | null;
  archived: boolean;
  seq: number;
  role: "user" | "assistant";
  snippet: string;
  createdAt: string;
  userId: string;
}

/** Results a page holds at most. */
export const SEARCH_PAGE_MAX = 50;
/** How deep pages go (a cursor is an offset into the ranking: past this, a person narrows the words instead). */
export const SEARCH_DEPTH_MAX = 1000;
/**
 * Matches ranked by BM25 at most. A search that matches more of the person's messages answers with its newest
 * RANKED_MATCHES_MAX, newest first: BM25 tells such matches apart by little (the word is everywhere), and scoring
 * them costs FTS5 a walk over every row holding the word, whoever's (150 ms for a word in half of 200,000 messages
 * under `npm run bench:search`). Another word narrows it, and is ranked again.
 */
export const RANKED_MATCHES_MAX = 2000;

const HitRow = z.object({
  session_id: z.string(),
  title: z.string().nullable(),
  archived_at: z.string().nullable(),
  seq: z.number().int(),
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  created_at: z.string(),
  user_id: z.string(),
});

/**
 * Up to `limit` messages from `offset` on, best first, and whether more follow. `newest` is the newest
 * RANKED_MATCHES_MAX matches (FTS5 walks the doclists newest first without scoring them): when it is full, the
 * matches are ordered newest first from its oldest on, else all are ranked by BM25 over the text (the owner column
 * weighs nothing; the CASE calls bm25() only on that branch). One page of ids is joined to its rows, whose org and
 * person are checked as stored (the tokens are hashes), and to the sessions' list entries (title, archived).
 */
export async function searchMessages(
  db: Db,
  scope: SearchScope,
  q: string,
  page: { limit: number; offset: number },
  /** A session whose messages are left out (the tool's own: its conversation is in the model's context already). */
  exceptSession: string | null = null,
): Promise<{ hits: MessageHit[]; more: boolean }> {
  const token = "all" in scope ? await orgToken(scope.org) : await personToken(scope.org, scope.user);
  const words = searchWords(q);
  const match = matchExpression(words, token);
  if (match === null) return { hits: [], more: false };
  // The limits are written into the statement, not bound: with them bound, SQLite plans the ranked page without
  // them (measured in the Workers runtime: 195 ms against 23 for the same rare word). All are whole numbers.
  const rows = Math.min(Math.max(Math.trunc(page.limit), 1), SEARCH_PAGE_MAX) + 1;
  const skip = Math.min(Math.max(Math.trunc(page.offset), 0), SEARCH_DEPTH_MAX);
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
         ORDER BY score, rowid LIMIT ${rows} OFFSET ${skip})
       SELECT m.session_id, s.title, s.archived_at, m.seq, m.role, m.created_at, m.user_id, m.text
       FROM ranked
       JOIN message_index m ON m.id = ranked.id
       JOIN session_index s ON s.session_id = m.session_id AND s.org = m.org_id
       WHERE m.org_id = ?2 AND (?3 IS NULL OR m.user_id = ?3)
       ORDER BY ranked.score, ranked.id`,
    )
    .bind(match, scope.org, "all" in scope ? null : scope.user, exceptSession)
    .all();
  const hits = results.map((row): MessageHit => {
    const r = HitRow.parse(row);
    return {
      sessionId: r.session_id,
      title: r.title,
      archived: r.archived_at !== null,
      seq: r.seq,
      role: r.role,
      snippet: markedSnippet(r.text, words),
      createdAt: r.created_at,
      userId: r.user_id,
    };
  });
  return { hits: hits.slice(0, rows - 1), more: hits.length >= rows };
}

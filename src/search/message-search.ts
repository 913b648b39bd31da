// Search across a person's conversations (GET /context/search, the conversation_search tool): the messages of the
// index (migration 0032) that hold every word of the query, best first by BM25 over their text, a page at a time.
// A search is one person's (their token AND the words) or, for an org admin, the org's; the session's title comes
// from its list entry, and a message of a session that has none (deleted, or not listed yet) is never found.
import { z } from "zod";
import type { Db } from "../db";
import { orgToken, personToken } from "./owner-token";
import { matchExpression } from "./search-query";
import { SNIPPET_CLOSE, SNIPPET_OPEN } from "./snippet";

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
/** Tokens of context a snippet shows around its matches (FTS5's snippet(): at most 64). */
const SNIPPET_TOKENS = 16;

const HitRow = z.object({
  session_id: z.string(),
  title: z.string().nullable(),
  archived_at: z.string().nullable(),
  seq: z.number().int(),
  role: z.enum(["user", "assistant"]),
  snippet: z.string(),
  created_at: z.string(),
  user_id: z.string(),
});

/**
 * Up to `limit` messages from `offset` on, best first, and whether more follow. The inner query ranks the matches
 * and keeps one page of ids (BM25 over the text alone: the owner column weighs nothing); only that page's snippets
 * are made, by the outer query (CROSS JOIN: the page's ids first, each looked up in the full-text index), which also checks the org and person of each row as stored (the tokens are hashes).
 */
export async function searchMessages(
  db: Db,
  scope: SearchScope,
  q: string,
  page: { limit: number; offset: number },
): Promise<{ hits: MessageHit[]; more: boolean }> {
  const token = "all" in scope ? await orgToken(scope.org) : await personToken(scope.org, scope.user);
  const match = matchExpression(q, token);
  if (match === null) return { hits: [], more: false };
  const { results } = await db
    .prepare(
      `WITH ranked AS (
         SELECT rowid AS id, bm25(message_fts, 0.0, 1.0) AS score FROM message_fts
         WHERE message_fts MATCH ?1 ORDER BY score, rowid LIMIT ?2 OFFSET ?3)
       SELECT m.session_id, s.title, s.archived_at, m.seq, m.role, m.created_at, m.user_id,
         snippet(message_fts, 1, ?4, ?5, '…', ${SNIPPET_TOKENS}) AS snippet
       FROM ranked
       CROSS JOIN message_fts ON message_fts.rowid = ranked.id AND message_fts MATCH ?1
       JOIN message_index m ON m.id = ranked.id
       JOIN session_index s ON s.session_id = m.session_id AND s.org = m.org_id
       WHERE m.org_id = ?6 AND (?7 IS NULL OR m.user_id = ?7)
       ORDER BY ranked.score, ranked.id`,
    )
    .bind(
      match,
      page.limit + 1,
      page.offset,
      SNIPPET_OPEN,
      SNIPPET_CLOSE,
      scope.org,
      "all" in scope ? null : scope.user,
    )
    .all();
  const hits = results.map((row): MessageHit => {
    const r = HitRow.parse(row);
    return {
      sessionId: r.session_id,
      title: r.title,
      archived: r.archived_at !== null,
      seq: r.seq,
      role: r.role,
      snippet: r.snippet,
      createdAt: r.created_at,
      userId: r.user_id,
    };
  });
  return { hits: hits.slice(0, page.limit), more: hits.length > page.limit };
}

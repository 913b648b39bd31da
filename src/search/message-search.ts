// Search across a person's conversations (GET /context/search, the conversation_search tool): the messages of the
// index (migration 0032) that hold every word of the query, best first by BM25 over their text, a page at a time.
// A search is one person's (their token AND the words) or, for an org admin, the org's; the session's title comes
// from its list entry, and a message of a session that has none (deleted, or not listed yet) is never found.
import type { Db } from "../db";
import { readIndexPage } from "./message-index";
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
 * Up to `limit` messages from `offset` on, best first (message-index.ts ranks them), and whether more follow, each
 * with its snippet.
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
  // Whole numbers within their bounds: message-index.ts writes them into its statement.
  const rows = Math.min(Math.max(Math.trunc(page.limit), 1), SEARCH_PAGE_MAX) + 1;
  const skip = Math.min(Math.max(Math.trunc(page.offset), 0), SEARCH_DEPTH_MAX);
  const results = await readIndexPage(db, {
    match,
    org: scope.org,
    user: "all" in scope ? null : scope.user,
    exceptSession,
    rows,
    skip,
  });
  const hits = results.map(
    (r): MessageHit => ({
      sessionId: r.session_id,
      title: r.title,
      archived: r.archived_at !== null,
      seq: r.seq,
      role: r.role,
      snippet: markedSnippet(r.text, words),
      createdAt: r.created_at,
      userId: r.user_id,
    }),
  );
  return { hits: hits.slice(0, rows - 1), more: hits.length >= rows };
}

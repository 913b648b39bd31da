// GET /context/search and the conversation_search tool: the query, one message found, a page of them.
import { z } from "zod";
import { SEARCH_PAGE_MAX } from "../search/message-search";
import { SEARCH_QUERY_MAX_CHARS } from "../search/search-query";

/** Results a page holds unless `limit` says otherwise. */
export const SEARCH_PAGE = 20;

export const SearchQueryText = z
  .string({ error: "is required: the words to look for" })
  .trim()
  .min(1, "must not be empty or blank: the words to look for")
  .max(SEARCH_QUERY_MAX_CHARS, `must be at most ${SEARCH_QUERY_MAX_CHARS} characters`);

export const SearchQuery = z.object({
  q: SearchQueryText.describe(
    "The words to find (every one must be in the message; the last also as a prefix). Punctuation and operators are " +
      "taken as text, never as query syntax.",
  ),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(SEARCH_PAGE_MAX)
    .default(SEARCH_PAGE)
    .describe(`Results a page (1 to ${SEARCH_PAGE_MAX}, ${SEARCH_PAGE} by default).`),
  cursor: z.string().min(1).optional().describe("The nextCursor of the previous page (with the same q)."),
  all: z
    .enum(["true", "false"], { error: "must be 'true' or 'false'" })
    .default("false")
    .describe("true (an org admin only): every person's sessions of the org; results carry userId."),
});

export const SearchResult = z.object({
  sessionId: z.string(),
  title: z.string().nullable().describe("The session's title in its owner's list."),
  archived: z.boolean().describe("The session is archived (archived sessions are searched too)."),
  seq: z.number().int().describe("The message's seq in its session (GET /context/sessions/{id}/messages)."),
  role: z.enum(["user", "assistant"]),
  snippet: z
    .string()
    .describe("HTML-safe: the text around the matches, escaped, each match between <mark> and </mark>; … where cut."),
  createdAt: z.string(),
  userId: z.string().optional().describe("Whose session it is (with all=true only)."),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const SearchPage = z.object({ results: z.array(SearchResult), nextCursor: z.string().nullable() });

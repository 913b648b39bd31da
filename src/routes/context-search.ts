// GET /context/search: the messages of the caller's own sessions (an org admin's `all=true`: the org's) that hold
// the words of `q`, best first, a page at a time (src/search/message-search.ts).
import { createRoute } from "@hono/zod-openapi";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
import { searchMessages } from "../search/message-search";
import { decodeSearchCursor, nextSearchCursor } from "../search/search-cursor";
import { htmlSnippet } from "../search/snippet";
import { isOrgAdmin } from "../tenancy/roles";
import { SearchPage, SearchQuery, type SearchResult } from "../wire/search";

export const contextSearchRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/context/search",
    summary: "Search the text of the caller's conversations",
    description:
      "Every message a person wrote and every answer the agent gave in the caller's own sessions (archived ones " +
      "too, marked), ranked by BM25, with the session's id and title, the message's seq and an HTML-safe snippet " +
      "(matches between <mark> and </mark>). A message is found once its turn has ended (the index is written " +
      "just after, off the reply path); a deleted session's messages are never found. `all=true`: an org admin " +
      "searches every person's sessions of the org, and each result carries `userId`.",
    security: BEARER,
    middleware: [requireScope("chat")],
    tags: ["sessions"],
    request: { query: SearchQuery },
    responses: { 200: json(SearchPage, "A page of messages found."), ...errors(400, 401, 403) },
  }),
  async (c) => {
    const { q, limit, cursor, all } = c.req.valid("query");
    const offset = cursor === undefined ? 0 : decodeSearchCursor(cursor);
    if (offset === null) {
      throw new ApiError("invalid_request", "cursor is not a cursor of this search: pass nextCursor as it came.", {
        param: "cursor",
      });
    }
    const principal = c.get("principal");
    const everyone = all === "true";
    if (everyone && !isOrgAdmin(principal)) {
      throw new ApiError("insufficient_scope", "Only an admin of the organization searches everyone's sessions.", {
        param: "all",
      });
    }
    const scope = everyone ? { org: principal.org, all: true as const } : { org: principal.org, user: principal.user };
    const page = await searchMessages(c.get("db"), scope, q, { limit, offset });
    const results = page.hits.map(
      (hit): SearchResult => ({
        sessionId: hit.sessionId,
        title: hit.title,
        archived: hit.archived,
        seq: hit.seq,
        role: hit.role,
        snippet: htmlSnippet(hit.snippet),
        createdAt: hit.createdAt,
        ...(everyone ? { userId: hit.userId } : {}),
      }),
    );
    return c.json({ results, nextCursor: nextSearchCursor(offset + limit, page.more) }, 200);
  },
);

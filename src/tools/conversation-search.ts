// conversation_search: the agent looks up what was said in the person's earlier conversations ("what did we decide
// about X last week?"), with the same results and the same authorization as GET /context/search without `all`: the
// session owner's own sessions only, whoever the tool's caller.
import { z } from "zod";
import type { Db } from "../db";
import { searchMessages } from "../search/message-search";
import { SEARCH_QUERY_MAX_CHARS } from "../search/search-query";
import { plainSnippet } from "../search/snippet";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";

export const CONVERSATION_SEARCH_TOOL_NAME = "conversation_search";

/** Results the model gets at most in one call (each a snippet: a handful is what an answer can use). */
export const CONVERSATION_SEARCH_MAX_RESULTS = 20;
const CONVERSATION_SEARCH_DEFAULT_RESULTS = 8;

const ConversationSearchArgs = z.object({
  query: z
    .string({ error: "ConversationSearchTool requires 'query': the words to look for." })
    .trim()
    .min(1, "ConversationSearchTool requires a non-empty 'query': the words to look for.")
    .max(
      SEARCH_QUERY_MAX_CHARS,
      `ConversationSearchTool requires 'query' to be at most ${SEARCH_QUERY_MAX_CHARS} characters.`,
    )
    .describe("A few distinctive words of what was said (all must be in a message; the last also as a prefix)."),
  limit: z
    .number({ error: "ConversationSearchTool requires 'limit' to be a whole number when it is given." })
    .int(`ConversationSearchTool requires 'limit' to be a whole number when it is given.`)
    .min(1, "ConversationSearchTool requires 'limit' to be at least 1.")
    .max(
      CONVERSATION_SEARCH_MAX_RESULTS,
      `ConversationSearchTool requires 'limit' to be at most ${CONVERSATION_SEARCH_MAX_RESULTS}.`,
    )
    .optional()
    .describe(
      `Results at most (1 to ${CONVERSATION_SEARCH_MAX_RESULTS}, ${CONVERSATION_SEARCH_DEFAULT_RESULTS} when omitted).`,
    ),
});

/** The tool, given the D1 database it reads the index from (absent: every call fails cleanly). */
export function conversationSearchTool(db: Db | undefined): AgentTool {
  return defineTool({
    name: CONVERSATION_SEARCH_TOOL_NAME,
    label: "ConversationSearchTool",
    usage:
      "Use this tool when the user refers to something said in an earlier conversation with you (a decision, a " +
      "name, a number, 'what did we say about X last week?') that is not in this conversation. Search with a " +
      "few distinctive words, not a sentence. Results are the user's own messages and your answers, best match " +
      "first, with the session's title, the message's seq and a snippet whose matches are between « and ». Do not " +
      "call it for what is already in this conversation.",
    description: "Full-text search over the messages of the user's own earlier conversations.",
    category: "history",
    runsOn: "server",
    // It only reads the index.
    repeatable: true,
    args: ConversationSearchArgs,
    failureMessage: "ConversationSearchTool could not search the conversations.",
    execute: async ({ query, limit }, context) => {
      if (!context) return InvokeResult.fromError("ConversationSearchTool needs a session: it searches its owner's.");
      if (!db) return InvokeResult.fromError("ConversationSearchTool has no conversation index here.");
      const page = await searchMessages(db, { org: context.org, user: context.user }, query, {
        limit: limit ?? CONVERSATION_SEARCH_DEFAULT_RESULTS,
        offset: 0,
      });
      return {
        results: page.hits.map((hit) => ({
          sessionId: hit.sessionId,
          title: hit.title,
          archived: hit.archived,
          seq: hit.seq,
          role: hit.role,
          snippet: plainSnippet(hit.snippet),
          createdAt: hit.createdAt,
        })),
      };
    },
  });
}

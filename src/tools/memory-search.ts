// memory_search: the model looks up what it knows about the user by words (docs/memory.md), beyond the memories the
// prompt already carries. The session owner's memories and their org's, best match first.
import { z } from "zod";
import { type MemoryAccess, memoryForContext } from "../memory/memory-access";
import { MemoryProblem } from "../memory/memory-store";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";
import { nonBlankString } from "./tool-arguments";

export const MEMORY_SEARCH_TOOL_NAME = "memory_search";

const MemorySearchArgs = z.object({
  query: nonBlankString("MemorySearchTool requires 'query' to be a non-empty string.")
    .pipe(z.string().max(200, "MemorySearchTool requires 'query' to be at most 200 characters."))
    .describe("Words to look for (a topic, a name), e.g. 'favourite editor'."),
  limit: z
    .number({ error: "MemorySearchTool requires 'limit' to be a whole number from 1 to 20 when it is given." })
    .int("MemorySearchTool requires 'limit' to be a whole number from 1 to 20 when it is given.")
    .min(1, "MemorySearchTool requires 'limit' to be a whole number from 1 to 20 when it is given.")
    .max(20, "MemorySearchTool requires 'limit' to be a whole number from 1 to 20 when it is given.")
    .optional()
    .describe("How many memories at most (1 to 20); 5 when omitted."),
});

export function memorySearchTool(
  access: MemoryAccess | undefined,
  catalog: AgentModeCatalogService,
  logger: AdminLogger,
): AgentTool {
  return defineTool({
    name: MEMORY_SEARCH_TOOL_NAME,
    label: "MemorySearchTool",
    usage:
      "Use this tool to look up what you know about the user from earlier conversations when the memories you " +
      "were given do not cover the question (their preferences, their projects, people they mentioned). Search " +
      "with a few words. Do not call it for facts of this conversation.",
    description: "Finds saved facts about the user (and their organization) by words, best match first.",
    category: "memory",
    runsOn: "server",
    // It only reads.
    repeatable: true,
    logger,
    args: MemorySearchArgs,
    checkContext: (context) => (context ? null : "MemorySearchTool needs the session it runs in."),
    execute: async ({ query, limit }, context, signal) => {
      if (!context) return InvokeResult.fromError("MemorySearchTool needs the session it runs in.");
      const memory = await memoryForContext(access, catalog, context, signal);
      if (!memory.ok) return InvokeResult.fromError(memory.message);
      try {
        return { memories: await memory.store.search(query, limit ?? 5) };
      } catch (error) {
        if (error instanceof MemoryProblem) {
          return InvokeResult.fromError("MemorySearchTool requires 'query' to contain a word or a number.");
        }
        throw error;
      }
    },
  });
}

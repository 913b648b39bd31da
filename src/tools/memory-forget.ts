// memory_forget: the model forgets what the user asks it to (docs/memory.md): one memory by its id, or the user's
// own memories with every word of a query (at most FORGET_AT_MOST a call). Never the org's memories: those are an
// admin's, changed in the console or by the API.
import { z } from "zod";
import { type MemoryAccess, memoryForContext } from "../memory/memory-access";
import { MemoryProblem } from "../memory/memory-store";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";

export const MEMORY_FORGET_TOOL_NAME = "memory_forget";

/** The most memories one call forgets by a query: a broad query does not empty a person's memory. */
export const FORGET_AT_MOST = 10;

const ONE_OF = "MemoryForgetTool requires exactly one of 'id' or 'query'.";

const MemoryForgetArgs = z
  .object({
    id: z
      .string({ error: "MemoryForgetTool requires 'id' to be a memory id when it is given." })
      .min(1)
      .max(200)
      .optional()
      .describe("The id of the memory to forget (from memory_search or the memories you were given)."),
    query: z
      .string({ error: "MemoryForgetTool requires 'query' to be a string when it is given." })
      .max(200)
      .optional()
      .describe("Words every memory to forget contains, e.g. 'peanut allergy'; when you have no id."),
  })
  .refine((args) => (args.id === undefined) !== (args.query === undefined || args.query.trim() === ""), {
    message: ONE_OF,
  });

export function memoryForgetTool(
  access: MemoryAccess | undefined,
  catalog: AgentModeCatalogService,
  logger: AdminLogger,
): AgentTool {
  return defineTool({
    name: MEMORY_FORGET_TOOL_NAME,
    label: "MemoryForgetTool",
    usage:
      "Use this tool when the user asks you to forget something you know about them: pass the memory's id when " +
      "you have it, else a few words the memory contains. Tell the user what was forgotten. Do not forget " +
      "memories the user did not ask you to.",
    description: "Forgets the user's own saved facts: one by id, or those containing every word of a query.",
    category: "memory",
    runsOn: "server",
    // Forgetting twice forgets what once does.
    repeatable: true,
    logger,
    args: MemoryForgetArgs,
    checkContext: (context) => (context ? null : "MemoryForgetTool needs the session it runs in."),
    execute: async ({ id, query }, context, signal) => {
      if (!context) return InvokeResult.fromError("MemoryForgetTool needs the session it runs in.");
      const memory = await memoryForContext(access, catalog, context, signal);
      if (!memory.ok) return InvokeResult.fromError(memory.message);
      const { store } = memory;
      const forgotten: { id: string; text: string }[] = [];
      try {
        if (id !== undefined) {
          const gone = await store.remove(id);
          if (!gone) return InvokeResult.fromError(`MemoryForgetTool found no memory '${id.slice(0, 100)}'.`);
          forgotten.push({ id: gone.id, text: gone.text });
          return { forgotten };
        }
        const found = await store.list({ q: query ?? "", limit: FORGET_AT_MOST });
        for (const candidate of found.memories) {
          if (candidate.scope !== "user") continue;
          const gone = await store.remove(candidate.id);
          if (gone) forgotten.push({ id: gone.id, text: gone.text });
        }
        return { forgotten };
      } catch (error) {
        if (error instanceof MemoryProblem) return InvokeResult.fromError(`MemoryForgetTool: ${error.message}`);
        throw error;
      } finally {
        // What was forgotten (even when a later removal failed) is out of every session's next prompt, this one's too.
        if (forgotten.length > 0) await access?.changed(context.org, context.user);
      }
    },
  });
}

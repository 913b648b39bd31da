// memory_save: the model keeps a fact the person stated or confirmed, for later conversations (docs/memory.md). A
// fact that repeats or corrects a memory updates it instead of adding another; the result says which, and what the
// memory said before. Saved for the session's owner, with the session and turn as its source.
import { z } from "zod";
import { type MemoryAccess, memoryForContext } from "../memory/memory-access";
import { MemoryProblem } from "../memory/memory-store";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { MEMORY_TEXT_MAX_CHARS } from "../wire/memory";
import { type AgentTool, InvokeResult } from "./contract";
import { defineTool } from "./define-tool";

export const MEMORY_SAVE_TOOL_NAME = "memory_save";

const MemorySaveArgs = z.object({
  text: z
    .string({ error: "MemorySaveTool requires 'text' to be a string." })
    .describe(
      `The fact, in a short sentence about the person ("Prefers answers in French"), at most ${MEMORY_TEXT_MAX_CHARS} characters.`,
    ),
  replaces: z
    .string({ error: "MemorySaveTool requires 'replaces' to be a memory id when it is given." })
    .max(200)
    .optional()
    .describe("The id of a memory this one corrects (from memory_search or what you were told); omit otherwise."),
});

export function memorySaveTool(
  access: MemoryAccess | undefined,
  catalog: AgentModeCatalogService,
  logger: AdminLogger,
): AgentTool {
  return defineTool({
    name: MEMORY_SAVE_TOOL_NAME,
    label: "MemorySaveTool",
    usage:
      "Use this tool to remember a fact about the user for later conversations: something they stated or " +
      "confirmed about themselves, their work or their preferences, or that they asked you to remember. Save one " +
      "short fact a call, in your own words. Do not save guesses, secrets (passwords, keys), or what only matters " +
      "in this conversation. Saving a fact that corrects one you know updates it.",
    description: "Saves a fact about the user for later conversations (a repeat or correction updates the old one).",
    category: "memory",
    runsOn: "server",
    // Saving the same fact twice updates it the second time: twice does what once does.
    repeatable: true,
    logger,
    args: MemorySaveArgs,
    checkContext: (context) => (context ? null : "MemorySaveTool needs the session it runs in."),
    execute: async ({ text, replaces }, context, signal) => {
      if (!context) return InvokeResult.fromError("MemorySaveTool needs the session it runs in.");
      const memory = await memoryForContext(access, catalog, context, signal);
      if (!memory.ok) return InvokeResult.fromError(memory.message);
      const source = context.turnId ? { sessionId: context.sessionId, turnId: context.turnId } : null;
      try {
        const saved = await memory.store.save({ text, source, ...(replaces !== undefined ? { replaces } : {}) });
        // Every session of the person (this one too) shows it from the next prompt on.
        await access?.changed(context.org, context.user);
        return saved;
      } catch (error) {
        if (error instanceof MemoryProblem) return InvokeResult.fromError(`MemorySaveTool: ${error.message}`);
        throw error;
      }
    },
  });
}

// What a request's prompt gets of the session owner's memories: read once per request and mode (started beside the
// turn's other first reads), sized to the mode's route's prompt budget, and the tools withheld when memory is off.
import type { AgentMode } from "../modes/agent-mode";
import { memoryRecallLimit, memorySectionBudget, type RecalledMemory } from "../prompts/memory-section";
import type { TurnStore } from "./turn-store";

/** The owner's memories for a mode's prompt, and the tools not offered (all the memory tools, when memory is off). */
export interface MemoryRecall {
  memories: RecalledMemory[];
  withheldTools: readonly string[];
}

/**
 * Reads what `mode`'s prompt shows of the session owner's memories: at most `limit` of them, the most relevant to
 * `message` after the pinned ones; when the org or the mode has memory off, none, and nothing is read.
 */
export type MemoryRecallSource = (mode: AgentMode, message: string, limit: number) => Promise<MemoryRecall>;

/** No memory: a reasoner without a source (the agent's own tests, a caller with no owner). */
export const NO_MEMORY: MemoryRecall = { memories: [], withheldTools: [] };

/**
 * The source, reading once per mode for the life of the result (one request to the session): the prefetch at the
 * turn's start and every iteration of the loop share the one read. A failed read is kept and fails where awaited.
 */
export function memoryOncePerMode(source: MemoryRecallSource): MemoryRecallSource {
  const reads = new Map<string, Promise<MemoryRecall>>();
  return (mode, message, limit) => {
    let read = reads.get(mode.key);
    if (!read) {
      read = source(mode, message, limit);
      read.catch(() => {});
      reads.set(mode.key, read);
    }
    return read;
  };
}

/** The memories for `mode`'s prompt, within the share of `promptBudgetTokens` the section may fill. */
export function recallForPrompt(
  source: MemoryRecallSource | undefined,
  mode: AgentMode,
  message: string,
  promptBudgetTokens: number,
): Promise<MemoryRecall> {
  if (!source) return Promise.resolve(NO_MEMORY);
  return source(mode, message, memoryRecallLimit(memorySectionBudget(promptBudgetTokens)));
}

/** The text of the person's newest message: what recall ranks memories against (a resumed turn's too). */
export function latestUserMessage(store: Pick<TurnStore, "newestFirst">): string {
  for (const message of store.newestFirst()) {
    if (message.role === "user" && message.kind === "message") return message.content ?? "";
  }
  return "";
}

/** The mode without the tools recall withholds (its list as it is when none are). */
export function withoutWithheld(mode: AgentMode, recall: MemoryRecall): AgentMode {
  if (recall.withheldTools.length === 0) return mode;
  const tools = mode.tools.filter((t) => !recall.withheldTools.includes(t));
  return tools.length === mode.tools.length ? mode : { ...mode, tools };
}

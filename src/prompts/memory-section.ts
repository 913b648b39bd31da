// The "What you know about this person" section of the enhanced system prompt: the session owner's memories (and
// their org's), whole, within a share of the prompt budget, in an order that does not depend on the message, so the
// prompt's bytes (and the provider's prompt cache) stay the same from turn to turn while the memories do not change.
import { CHARS_PER_TOKEN } from "../token-estimate";
import type { Memory } from "../wire/memory";

export const MEMORY_SECTION_HEADING = "## What you know about this person";

/** The share of the prompt budget (PROMPT_BUDGET_TOKENS, or a route's own) the section may fill. */
export const MEMORY_PROMPT_SHARE = 0.15;

/** At most this many memories are read for one prompt, however large the budget. */
export const MEMORY_RECALL_CAP = 500;

const INTRO =
  "What this person asked you to remember, and what their organization keeps for everyone in it. Use it " +
  "without asking again. Each line starts with the memory's id in brackets: `memory_save` takes it as " +
  "`replaces` to correct that memory, `memory_forget` as `id` to forget it.";

/** What the section shows of a memory. */
export type RecalledMemory = Pick<Memory, "id" | "text" | "scope" | "pinned" | "createdAt">;

/** The section's budget, in estimated tokens, for a prompt budget of `promptBudgetTokens`. */
export function memorySectionBudget(promptBudgetTokens: number): number {
  return Math.floor(promptBudgetTokens * MEMORY_PROMPT_SHARE);
}

/** The length of a memory's id as src/memory/memory-store.ts makes it: `mem_` and 32 hex digits (a test holds them together). */
export const MEMORY_ID_CHARS = 36;

/** The fewest characters a memory's line can take: `- [<id>] x` and its line break. */
const MIN_LINE_CHARS = "- [] x\n".length + MEMORY_ID_CHARS;

/**
 * How many memories to read for a section of `budgetTokens`: one more than could ever fit, so that reading fewer
 * means the person has no others, and reading that many means relevance must choose.
 */
export function memoryRecallLimit(budgetTokens: number): number {
  return Math.min(MEMORY_RECALL_CAP, Math.floor((budgetTokens * CHARS_PER_TOKEN) / MIN_LINE_CHARS) + 1);
}

/** The order the section lists memories in: pinned first, then the oldest first (ties by id). */
export function stableOrder(a: RecalledMemory, b: RecalledMemory): number {
  return (
    Number(b.pinned) - Number(a.pinned) ||
    a.createdAt.localeCompare(b.createdAt) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** A memory as one line: its id, its marks, its text with line breaks folded (one memory never reads as two). */
export function memoryLine(memory: RecalledMemory): string {
  const marks = `${memory.pinned ? " (pinned)" : ""}${memory.scope === "org" ? " (the organization's)" : ""}`;
  return `- [${memory.id}]${marks} ${memory.text.replace(/\s+/g, " ").trim()}`;
}

export interface MemorySection {
  text: string;
  /** The ids of the memories shown, in the section's order. */
  shown: string[];
}

/**
 * The section for `recalled` (in recall's order: pinned first, then the most relevant to the message) within
 * `budgetTokens`, or null when there is nothing to show or no room. Memories are taken whole in recall's order while
 * they fit (one too long for what is left is passed over for shorter ones after it), then listed in the stable order:
 * when all of them fit, the section is the same whatever the message.
 */
export function renderMemorySection(recalled: readonly RecalledMemory[], budgetTokens: number): MemorySection | null {
  const budgetChars = budgetTokens * CHARS_PER_TOKEN;
  const head = `${MEMORY_SECTION_HEADING}\n${INTRO}`;
  let used = head.length;
  const taken: RecalledMemory[] = [];
  for (const memory of recalled) {
    const cost = memoryLine(memory).length + 1;
    if (used + cost > budgetChars) continue;
    used += cost;
    taken.push(memory);
  }
  if (taken.length === 0) return null;
  const shown = [...taken].sort(stableOrder);
  return { text: [head, ...shown.map(memoryLine)].join("\n"), shown: shown.map((m) => m.id) };
}

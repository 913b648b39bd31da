// The summary of the earlier conversation keeps to its budget (SUMMARY_SHARE of the history budget): a summariser's
// answer longer than the budget is cut at its last sentence end within it, with a note saying so, never stored whole.
import { CHARS_PER_TOKEN, estimateTokens } from "../token-estimate";

export const SUMMARY_CUT_NOTE = "[The summary was cut to fit its budget.]";

/** `text` within `budgetTokens` estimated tokens: whole when it fits, else cut at a sentence end, with the note. */
export function summaryWithinBudget(text: string, budgetTokens: number): string {
  if (estimateTokens(text) <= budgetTokens) return text;
  const room = Math.max(0, budgetTokens * CHARS_PER_TOKEN - SUMMARY_CUT_NOTE.length - 1);
  const head = text.slice(0, room);
  // The last sentence end (., ! or ? before a space or a line end, or a line end) inside the room.
  let end = -1;
  for (const match of head.matchAll(/[.!?](?=\s)|\n/g)) end = match.index + (match[0] === "\n" ? 0 : 1);
  const kept = (end > 0 ? head.slice(0, end) : head).trimEnd();
  return kept ? `${kept}\n${SUMMARY_CUT_NOTE}` : SUMMARY_CUT_NOTE;
}

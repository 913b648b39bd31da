// When and what to compact: after a turn, the history the next request would carry is weighed against the history
// budget; past COMPACT_AT of it, the turns older than the newest few (those that fit KEEP_SHARE) are to be folded
// into the summary, with the summary before them. Read back from the newest message only as far as needed.

import { estimateTokens } from "../token-estimate";
import type { ConversationMessage, ConversationSummary } from "../wire/turn";
import { boundToolResult, messageCost, turnsNewestFirst } from "./conversation";
import type { TurnStore } from "./turn-store";

/** Share of the history budget past which a compaction runs. */
export const COMPACT_AT = 0.8;
/**
 * Share of the history budget the turns kept whole may fill after one (the newest turn is kept whatever its size):
 * with the summary's own share (SUMMARY_SHARE) the history is then about 40% of its budget, half of COMPACT_AT, so
 * the next compaction comes several turns later.
 */
export const KEEP_SHARE = 0.25;
/** Characters of one message the summariser is shown (a long tool result is cut, with a note). */
export const MESSAGE_CHARS = 4_000;

export interface CompactionPlan {
  /** The summary the new one takes in (null: the first). */
  basedOn: ConversationSummary | null;
  fromSeq: number;
  toSeq: number;
  /** The messages from after `basedOn` to `toSeq`, in order. */
  messages: ConversationMessage[];
}

export interface CompactionSource extends Pick<TurnStore, "newestFirst" | "summary"> {
  /** Up to `limit` messages after `afterSeq` and before `beforeSeq`, in order. */
  messagesBetween(afterSeq: number, beforeSeq: number, limit: number): ConversationMessage[];
}

/** Messages the summariser is given at most in one compaction (a longer backlog takes several). */
const MAX_MESSAGES = 400;

/**
 * What to fold into the summary now, or null when the history still fits under COMPACT_AT of the budget; the
 * messages taken in fill at most `takeTokens` (what the compaction request has room for; the budget by default).
 */
export function planCompaction(
  store: CompactionSource,
  budgetTokens: number,
  takeTokens: number = budgetTokens,
): CompactionPlan | null {
  const basedOn = store.summary();
  let used = basedOn ? estimateTokens(basedOn.text) : 0;
  let kept = 0;
  let firstKeptSeq: number | null = null;
  let over = false;
  for (const turn of turnsNewestFirst(store.newestFirst(), basedOn?.toSeq ?? 0)) {
    const cost = turn.reduce((sum, m) => sum + messageCost(m), 0);
    used += cost;
    if (firstKeptSeq === null || kept + cost <= budgetTokens * KEEP_SHARE) {
      kept += cost;
      firstKeptSeq = turn[0]?.seq ?? firstKeptSeq;
    }
    if (used > budgetTokens * COMPACT_AT) {
      over = true;
      break;
    }
  }
  if (!over || firstKeptSeq === null) return null;
  // The oldest turns not yet summarised, whole, as many as one summary takes in (at most the budget's worth).
  const candidates = store.messagesBetween(basedOn?.toSeq ?? 0, firstKeptSeq, MAX_MESSAGES);
  let messages: ConversationMessage[] = [];
  let taken = 0;
  for (const message of candidates) {
    const last = messages.at(-1);
    const startsTurn = !last || last.turnId !== message.turnId;
    const cost = Math.min(messageCost(message), estimateTokens(MESSAGE_CHARS));
    if (startsTurn && messages.length > 0 && taken + cost > takeTokens) break;
    taken += cost;
    messages.push(message);
  }
  // A turn the row limit cut is left whole for the next compaction (unless it is all there is).
  if (candidates.length === MAX_MESSAGES && messages.length === candidates.length) {
    const partial = messages.at(-1)?.turnId;
    const whole = messages.filter((m) => m.turnId !== partial);
    if (whole.length > 0) messages = whole;
  }
  const first = messages[0];
  const last = messages.at(-1);
  if (!first || !last) return null;
  return { basedOn, fromSeq: basedOn?.fromSeq ?? first.seq, toSeq: last.seq, messages };
}

/** The messages as the summariser reads them: who said what, tool calls and their results, each cut to a size. */
export function compactionTranscript(messages: readonly ConversationMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.kind === "correction") continue;
    const text = boundToolResult(m.content ?? "", MESSAGE_CHARS);
    if (m.role === "tool" || m.kind === "tool_result") lines.push(`Tool result: ${text}`);
    else if (m.role === "user") {
      // Attached files are named, not copied: the summary says what was shared, the kept turns carry the rest.
      const files = (m.attachments ?? []).map((f) => f.name);
      const attached = files.length > 0 ? ` [attached ${files.join(", ")}]` : "";
      lines.push(`${m.kind === "workflow" ? "Workflow" : "User"}: ${text}${attached}`);
    } else {
      const calls = (m.toolCalls ?? []).map((c) => `${c.name}(${boundToolResult(c.arguments, 500)})`);
      const said = [text, calls.length > 0 ? `[called ${calls.join(", ")}]` : ""].filter(Boolean).join(" ");
      if (said) lines.push(`Agent: ${said}`);
    }
  }
  return lines.join("\n\n");
}

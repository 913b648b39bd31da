// Turns the stored conversation into the model's messages: its summary, bounded history, bounded tool results.

import { estimateTokens } from "../token-estimate";
import type { ChatMessage } from "../wire/openai";
import type { ConversationMessage, ConversationSummary } from "../wire/turn";
import type { AgentConfig } from "./agent-config";
import type { StoredToolCall } from "./agent-tool-call";
import { attachmentTokens, userContent } from "./attachment-content";
import type { TurnState, TurnStore } from "./turn-store";

/** A result over the budget reaches the model cut, with a note saying so and how large it was. */
export function boundToolResult(content: string, budgetChars: number): string {
  if (content.length <= budgetChars) return content;
  return (
    `${content.slice(0, budgetChars)}\n[truncated: the result was ${content.length} characters; ` +
    `the first ${budgetChars} are shown. Ask for a narrower range if you need more.]`
  );
}

function toChatMessage(message: ConversationMessage): ChatMessage {
  if (message.role === "tool")
    return { role: "tool", tool_call_id: message.toolCallId ?? "", content: message.content ?? "" };
  if (message.role === "user")
    return { role: "user", content: userContent(message.content ?? "", message.attachments) };
  return {
    role: "assistant",
    content: message.content,
    ...(message.toolCalls && message.toolCalls.length > 0
      ? {
          tool_calls: message.toolCalls.map((c) => ({
            id: c.id,
            type: "function" as const,
            function: { name: c.name, arguments: c.arguments },
          })),
        }
      : {}),
  };
}

/** A message's estimated tokens, as the history budget counts them. */
export const messageCost = (message: ConversationMessage) =>
  estimateTokens(message.content ?? "") +
  estimateTokens(JSON.stringify(message.toolCalls ?? [])) +
  attachmentTokens(message.attachments);

/** How the model is told of the summarised part: a system message ahead of the turns that follow it. */
export const SUMMARY_PREFIX = "Summary of the earlier conversation:";

export function summaryMessage(summary: ConversationSummary): ChatMessage {
  return { role: "system", content: `${SUMMARY_PREFIX}\n${summary.text}` };
}

/**
 * The conversation's turns from the newest back, each whole and in seq order (a turn is its messages in a row with
 * one turn id), read only as far as the caller goes, and never at or before `afterSeq` (what a summary covers).
 */
export function* turnsNewestFirst(
  newestFirst: Iterable<ConversationMessage>,
  afterSeq = 0,
): Generator<ConversationMessage[], void, undefined> {
  let turn: ConversationMessage[] = [];
  for (const message of newestFirst) {
    if (message.seq <= afterSeq) break;
    if (turn.length > 0 && turn[0]?.turnId !== message.turnId) {
      yield turn;
      turn = [];
    }
    turn.unshift(message);
  }
  if (turn.length > 0) yield turn;
}

const turnCost = (turn: ConversationMessage[]) => turn.reduce((sum, m) => sum + messageCost(m), 0);

/**
 * The summary of the earlier conversation, when there is one, then the turns after it: the current turn is always
 * sent whole; earlier turns are added newest first while they fit the budget (the summary counts in it), each
 * whole, so a tool result never arrives without the call it answers. The conversation is read back from its newest
 * message only as far as the budget reaches.
 */
export function boundedHistory(
  newestFirst: Iterable<ConversationMessage>,
  currentTurnId: string,
  budgetTokens: number,
  summary: ConversationSummary | null = null,
): ChatMessage[] {
  let used = summary ? estimateTokens(summary.text) : 0;
  const kept: ConversationMessage[][] = [];
  for (const turn of turnsNewestFirst(newestFirst, summary?.toSeq ?? 0)) {
    const cost = turnCost(turn);
    if (turn[0]?.turnId !== currentTurnId) {
      if (used + cost > budgetTokens) break;
    }
    used += cost;
    kept.unshift(turn);
  }
  const messages = kept.flat().map(toChatMessage);
  return summary ? [summaryMessage(summary), ...messages] : messages;
}

/** How many of the newest messages are the turn `turnId`'s (the current turn's, sent whole). */
export function currentTurnLength(newestFirst: Iterable<ConversationMessage>, turnId: string): number {
  let count = 0;
  for (const message of newestFirst) {
    if (message.turnId !== turnId) break;
    count++;
  }
  return count;
}

/** How a tool's result reaches a model in the JSON tool format: a user message naming the call. */
function jsonFormatResult(name: string, id: string, content: string): string {
  return `Result of tool ${name} (call ${id}):\n${content}`;
}

/**
 * The history as a route in `format` reads it. Messages are stored in the format of the route that served
 * their step; a JSON-format route (a fallback of a native one, say) gets native tool calls written as the JSON
 * object it is told to use, and their results as user messages. A native route reads JSON-format steps as
 * they are: text.
 */
export function historyInFormat(messages: ChatMessage[], format: "native" | "json"): ChatMessage[] {
  if (format === "native") return messages;
  const names = new Map<string, string>();
  return messages.map((message): ChatMessage => {
    if (message.role === "assistant" && message.tool_calls?.length) {
      const calls = message.tool_calls.map((c) => {
        names.set(c.id, c.function.name);
        let parameters: unknown = {};
        try {
          parameters = JSON.parse(c.function.arguments);
        } catch {
          // Arguments that were not JSON were refused when they came; the object shows the call all the same.
        }
        return JSON.stringify({ tool: c.function.name, parameters, terminate: false });
      });
      return { role: "assistant", content: [message.content, ...calls].filter(Boolean).join("\n") };
    }
    if (message.role === "tool") {
      return {
        role: "user",
        content: jsonFormatResult(names.get(message.tool_call_id) ?? "unknown", message.tool_call_id, message.content),
      };
    }
    return message;
  });
}

/**
 * Appends a settled batch's results for the model, in call order, in the tool format of the route that asked
 * for the calls: `tool` messages for native function calling, a user message a result for the JSON format. A
 * call's note (a branch's new session id) rides along.
 */
export function appendBatchResults(
  store: TurnStore,
  turn: TurnState,
  batch: StoredToolCall[],
  config: Pick<AgentConfig, "toolResultBudgetChars">,
): void {
  for (const call of [...batch].sort((a, b) => a.position - b.position)) {
    let content =
      call.errorMessage !== null
        ? JSON.stringify({ error: call.errorMessage })
        : boundToolResult(call.resultJson ?? "", config.toolResultBudgetChars);
    if (call.note && call.errorMessage === null) content += `\n${call.note}`;
    if ((turn.stepFormat ?? "native") === "native") {
      store.appendMessage({ turnId: turn.turnId, role: "tool", toolCallId: call.id, content, kind: "tool_result" });
    } else {
      store.appendMessage({
        turnId: turn.turnId,
        role: "user",
        content: jsonFormatResult(call.name, call.id, content),
        kind: "tool_result",
      });
    }
  }
}

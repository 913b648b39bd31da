// Turns the stored conversation into the model's messages: bounded history, bounded tool results.
import type { ChatMessage } from "../llm/chat-model";
import { estimateTokens } from "../prompts/system-prompt-enhancer";
import type { AgentConfig } from "./agent-config";
import type { StoredToolCall } from "./agent-tool-call";
import type { ConversationMessage, TurnState, TurnStore } from "./turn-store";

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
  if (message.role === "user") return { role: "user", content: message.content ?? "" };
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

const cost = (message: ConversationMessage) =>
  estimateTokens(message.content ?? "") + estimateTokens(JSON.stringify(message.toolCalls ?? []));

/**
 * The current turn is always sent whole. Earlier turns are added newest first while they fit the
 * budget, each whole, so a tool result never arrives without the call it answers.
 */
export function boundedHistory(
  messages: ConversationMessage[],
  currentTurnId: string,
  budgetTokens: number,
): ChatMessage[] {
  const current = messages.filter((m) => m.turnId === currentTurnId);
  const earlier = messages.filter((m) => m.turnId !== currentTurnId);
  const turns: ConversationMessage[][] = [];
  for (const message of earlier) {
    const last = turns.at(-1);
    if (last && last[0]?.turnId === message.turnId) last.push(message);
    else turns.push([message]);
  }
  let used = current.reduce((sum, m) => sum + cost(m), 0);
  const kept: ConversationMessage[][] = [];
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] ?? [];
    const turnCost = turn.reduce((sum, m) => sum + cost(m), 0);
    if (used + turnCost > budgetTokens) break;
    used += turnCost;
    kept.unshift(turn);
  }
  return [...kept.flat(), ...current].map(toChatMessage);
}

/**
 * Appends a settled batch's results for the model, in call order: `tool` messages for native function
 * calling, a user message a result for the JSON format. A call's note (a branch's new session id) rides along.
 */
export function appendBatchResults(
  store: TurnStore,
  turn: TurnState,
  batch: StoredToolCall[],
  config: Pick<AgentConfig, "toolFormat" | "toolResultBudgetChars">,
): void {
  for (const call of [...batch].sort((a, b) => a.position - b.position)) {
    let content =
      call.errorMessage !== null
        ? JSON.stringify({ error: call.errorMessage })
        : boundToolResult(call.resultJson ?? "", config.toolResultBudgetChars);
    if (call.note && call.errorMessage === null) content += `\n${call.note}`;
    if (config.toolFormat === "native") {
      store.appendMessage({ turnId: turn.turnId, role: "tool", toolCallId: call.id, content, kind: "tool_result" });
    } else {
      store.appendMessage({
        turnId: turn.turnId,
        role: "user",
        content: `Result of tool ${call.name} (call ${call.id}):\n${content}`,
        kind: "tool_result",
      });
    }
  }
}

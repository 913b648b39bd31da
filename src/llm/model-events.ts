// What a model yields as it answers, whatever its wire (an OpenAI-compatible stream, the Workers AI binding):
// text, tool call fragments, usage and the finish reason, in one small union; and the one fold of those events
// into the ChatResponse the loop reads. A model that fails throws a ModelError instead of yielding one.
import type { TokenUsage } from "../wire/turn";
import type { ChatResponse } from "./chat-model";

export type ModelEvent =
  /** A piece of the answer's text, in order. */
  | { type: "text"; text: string }
  /**
   * A tool call, whole or a fragment of one: fragments of a call share its `index` (0, 1, ... in the order the
   * calls start); the first carries its `id`; `name` and `arguments` are appended to what came before.
   */
  | { type: "tool_call"; index: number; id?: string; name?: string; arguments: string }
  /** The tokens the call used, as the model reported them (the last report counts). */
  | { type: "usage"; usage: TokenUsage }
  /** Why the answer ended (`stop`, `tool_calls`, `length`, ...); the last one counts. */
  | { type: "finish"; reason: string };

/**
 * The answer `events` make, `onTextDelta` hearing each piece of text as it comes. Text that is empty is `null`,
 * as a streamed OpenAI answer has it.
 */
export async function responseOf(
  events: AsyncIterable<ModelEvent> | Iterable<ModelEvent>,
  onTextDelta?: (text: string) => void,
  onFirstChunk?: () => void,
): Promise<ChatResponse> {
  let content = "";
  let finishReason: string | null = null;
  let usage: TokenUsage | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  let first = onFirstChunk;
  for await (const event of events) {
    if (first) {
      first();
      first = undefined;
    }
    switch (event.type) {
      case "text":
        content += event.text;
        onTextDelta?.(event.text);
        break;
      case "tool_call": {
        const call = calls[event.index] ?? { id: "", name: "", arguments: "" };
        calls[event.index] = call;
        if (event.id) call.id = event.id;
        if (event.name) call.name += event.name;
        call.arguments += event.arguments;
        break;
      }
      case "usage":
        usage = event.usage;
        break;
      case "finish":
        finishReason = event.reason;
        break;
    }
  }
  return {
    content: content.length > 0 ? content : null,
    toolCalls: calls.filter(Boolean),
    finishReason,
    ...(usage ? { usage } : {}),
  };
}

// An OpenAI chat completion event stream (`chat.completion.chunk` events, then `[DONE]`) read as model events.
// A stream that is not one throws a ModelError: an event that is not JSON or not a chunk, an error event, a
// stream with no chunk at all, or one that ends before its answer finished (no [DONE] and no finish reason).
import { ChatCompletionChunkJson } from "../wire/openai";
import { ModelError } from "./chat-model";
import type { ModelEvent } from "./model-events";
import { sseData } from "./sse-lines";
import { streamErrorOf } from "./upstream-error";

/** How much of an event a failure's detail quotes. */
const DETAIL_CHARS = 500;

/**
 * The events of `body`, an OpenAI chat completion stream. `redact` cleans what a failure's detail quotes of
 * the stream (the upstream may echo our key back).
 */
export async function* openAIStreamEvents(
  body: ReadableStream<Uint8Array>,
  redact: (text: string) => string,
): AsyncGenerator<ModelEvent> {
  let done = false;
  let finished = false;
  let chunks = 0;
  for await (const data of sseData(body)) {
    if (data === "[DONE]") {
      done = true;
      break;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new ModelError(
        "model_bad_response",
        redact(`stream event is not JSON: ${redact(data).slice(0, DETAIL_CHARS)}`),
      );
    }
    const chunk = ChatCompletionChunkJson.safeParse(json);
    if (!chunk.success) {
      throw new ModelError(
        "model_bad_response",
        redact(`stream event is not a chat completion chunk: ${redact(data).slice(0, DETAIL_CHARS)}`),
      );
    }
    if (chunk.data.error) {
      throw streamErrorOf(json, redact, `stream error event: ${redact(data).slice(0, DETAIL_CHARS)}`);
    }
    chunks++;
    if (chunk.data.usage) yield { type: "usage", usage: chunk.data.usage };
    for (const choice of chunk.data.choices ?? []) {
      if (choice.delta?.content) yield { type: "text", text: choice.delta.content };
      for (const fragment of choice.delta?.tool_calls ?? []) {
        yield {
          type: "tool_call",
          index: fragment.index,
          ...(fragment.id ? { id: fragment.id } : {}),
          ...(fragment.function?.name ? { name: fragment.function.name } : {}),
          arguments: fragment.function?.arguments ?? "",
        };
      }
      if (choice.finish_reason) {
        finished = true;
        yield { type: "finish", reason: choice.finish_reason };
      }
    }
  }
  if (chunks === 0) throw new ModelError("model_bad_response", "the event stream carried no chat completion chunk");
  if (!done && !finished)
    throw new ModelError("model_bad_response", "the event stream ended before the answer finished");
}

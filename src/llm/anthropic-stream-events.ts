// An Anthropic Messages event stream (message_start, content blocks and their deltas, message_delta, message_stop)
// read as model events, through the one translation of those events (MessageEventsToChatChunks). A stream that is
// not one throws a ModelError: an event that is not JSON or not a Messages event, an error event, or a stream that
// ends before message_stop.
import { z } from "zod";
import { MessageEventsToChatChunks } from "../translate/anthropic-chat-stream";
import { ANTHROPIC_ERROR_STATUS, isAnthropicErrorType, MessageStreamEvent } from "../wire/anthropic";
import type { TokenUsage } from "../wire/turn";
import { ModelError } from "./chat-model";
import type { ModelEvent } from "./model-events";
import { sseData } from "./sse-lines";
import { modelErrorOf } from "./upstream-error";

/** How much of an event a failure's detail quotes. */
const DETAIL_CHARS = 500;

/** A tool call fragment of a translated chunk (the translation writes its deltas as plain records). */
const ToolCallFragment = z.looseObject({
  index: z.number().int(),
  id: z.string().optional(),
  function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});
const ToolCallFragments = z.array(ToolCallFragment).catch([]);

/** Anthropic's usage counts: the cache's reads and writes are counted apart from `input_tokens`. */
export interface AnthropicUsageCounts {
  input_tokens?: number | null | undefined;
  output_tokens?: number | null | undefined;
  cache_creation_input_tokens?: number | null | undefined;
  cache_read_input_tokens?: number | null | undefined;
}

/** Anthropic's usage as ours: `promptTokens` counts every input token (fresh, read from and written to the cache). */
export function tokenUsageOfAnthropic(usage: AnthropicUsageCounts): TokenUsage {
  const read = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  const promptTokens = (usage.input_tokens ?? 0) + read + written;
  const completionTokens = usage.output_tokens ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    ...(usage.cache_read_input_tokens != null ? { cachedInputTokens: read } : {}),
    ...(usage.cache_creation_input_tokens != null ? { cacheWriteInputTokens: written } : {}),
  };
}

/** The counts a later event says, over the earlier ones (message_delta repeats only what it knows). */
function mergedUsage(before: AnthropicUsageCounts, after: AnthropicUsageCounts): AnthropicUsageCounts {
  const out = { ...before };
  for (const key of [
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
  ] as const) {
    const value = after[key];
    if (value != null) out[key] = value;
  }
  return out;
}

/**
 * The events of `body`, an Anthropic Messages stream. `redact` cleans what a failure's detail quotes of the stream
 * (the upstream may echo our key back).
 */
export async function* anthropicStreamEvents(
  body: ReadableStream<Uint8Array>,
  redact: (text: string) => string,
): AsyncGenerator<ModelEvent> {
  const chunks = new MessageEventsToChatChunks({ created: 0, includeUsage: true });
  let stopped = false;
  // The usage as the raw events say it (message_start, then message_delta): the translation's chat usage has no
  // place for the cache's writes.
  let usage: AnthropicUsageCounts = {};
  for await (const data of sseData(body)) {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new ModelError(
        "model_bad_response",
        redact(`stream event is not JSON: ${redact(data).slice(0, DETAIL_CHARS)}`),
      );
    }
    const event = MessageStreamEvent.safeParse(json);
    if (!event.success) {
      throw new ModelError(
        "model_bad_response",
        redact(`stream event is not a Messages event: ${redact(data).slice(0, DETAIL_CHARS)}`),
      );
    }
    if (event.data.type === "error") {
      const { type, message } = event.data.error;
      const status = isAnthropicErrorType(type) ? ANTHROPIC_ERROR_STATUS[type] : 500;
      throw modelErrorOf(status, data, null, redact, redact(`stream error event: ${type}: ${message}`));
    }
    if (event.data.type === "message_stop") stopped = true;
    if (event.data.type === "message_start") usage = mergedUsage(usage, event.data.message.usage);
    if (event.data.type === "message_delta") usage = mergedUsage(usage, event.data.usage);
    for (const item of chunks.push(event.data)) {
      if ("error" in item) continue; // error events were handled above; the translation makes no other
      if (item.usage) yield { type: "usage", usage: tokenUsageOfAnthropic(usage) };
      for (const choice of item.choices) {
        const content = choice.delta.content;
        if (typeof content === "string" && content !== "") yield { type: "text", text: content };
        for (const call of ToolCallFragments.parse(choice.delta.tool_calls ?? [])) {
          const name = call.function?.name;
          yield {
            type: "tool_call",
            index: call.index,
            ...(call.id ? { id: call.id } : {}),
            ...(name ? { name } : {}),
            arguments: call.function?.arguments ?? "",
          };
        }
        if (choice.finish_reason) yield { type: "finish", reason: choice.finish_reason };
      }
    }
    if (stopped) return;
  }
  throw new ModelError("model_bad_response", "the event stream ended before message_stop");
}

// The usage the meter reads from Anthropic's Messages API: a message's `usage` and a stream's `message_start` and
// `message_delta` events, the cache's writes and reads counted as input.
import { describe, expect, it } from "vitest";
import { SseUsageScanner, usageOfJson } from "../../src/passthrough/usage";

const encoder = new TextEncoder();
const event = (data: unknown) => encoder.encode(`event: x\ndata: ${JSON.stringify(data)}\n\n`);
const bytesOf = (value: unknown) => new Response(JSON.stringify(value)).arrayBuffer();
const cached = { input_tokens: 10, cache_creation_input_tokens: 3, cache_read_input_tokens: 4 };

function scan(events: unknown[]): SseUsageScanner {
  const scanner = new SseUsageScanner();
  for (const data of events) scanner.push(event(data));
  return scanner;
}

describe("usage on the Messages API", () => {
  it("reads a message's usage, the cache's writes and reads counted as input", async () => {
    const bytes = await bytesOf({ type: "message", usage: { ...cached, output_tokens: 6 } });
    expect(usageOfJson(bytes)).toEqual({
      promptTokens: 17,
      completionTokens: 6,
      totalTokens: 23,
      cachedInputTokens: 4,
      cacheWriteInputTokens: 3,
    });
  });

  it("reads a message whose cache counts are null as its input tokens alone", async () => {
    const usage = {
      input_tokens: 10,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: null,
      output_tokens: 2,
    };
    const bytes = await bytesOf({ type: "message", usage });
    expect(usageOfJson(bytes)).toEqual({ promptTokens: 10, completionTokens: 2, totalTokens: 12 });
  });

  it("reads a stream's input at message_start and its output at message_delta", () => {
    const scanner = scan([
      { type: "message_start", message: { usage: { ...cached, output_tokens: 1 } } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 6 } },
    ]);
    expect([scanner.usage, scanner.answerChars]).toEqual([
      { promptTokens: 17, completionTokens: 6, totalTokens: 23, cachedInputTokens: 4, cacheWriteInputTokens: 3 },
      5,
    ]);
  });

  it("takes a message_delta's input tokens when it says them, as newer API versions do", () => {
    const scanner = scan([
      { type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { ...cached, output_tokens: 8 } },
    ]);
    expect(scanner.usage).toEqual({
      promptTokens: 17,
      completionTokens: 8,
      totalTokens: 25,
      cachedInputTokens: 4,
      cacheWriteInputTokens: 3,
    });
  });

  it("counts tool input fragments as answer characters for a stream cut short", () => {
    const scanner = scan([
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"city":' } },
    ]);
    expect([scanner.usage, scanner.answerChars]).toEqual([null, 8]);
  });
});

// The passthrough on Anthropic's Messages wire, seen by the official `@anthropic-ai/sdk` (base URL our host): a
// chat completions route (the scripted OpenAI upstream) answers text, tool calls and streams, translated both ways.

import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, type TestKey, type TestWorker, worker, workerWith } from "./harness";

function anthropic(key: TestKey, through: TestWorker = worker): Anthropic {
  return new Anthropic({
    apiKey: key.key,
    baseURL: "http://localhost",
    maxRetries: 0,
    fetch: (input, init) => through.fetch(input, init),
  });
}

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("POST /v1/messages on a chat completions route", () => {
  it("answers messages.create with the upstream's text, end_turn and its usage", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello there.", usage }]);
    const message = await anthropic(await newChatKey()).messages.create({
      model: "claude-test",
      max_tokens: 64,
      system: "Be brief.",
      messages: [{ role: "user", content: `Hi ${script.marker}` }],
    });
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text: "Hello there." }],
      stop_reason: "end_turn",
      usage: { input_tokens: 12, output_tokens: 5 },
    });
    const [sent] = await script.bodies();
    expect(sent).toMatchObject({
      max_completion_tokens: 64,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: `Hi ${script.marker}` },
      ],
    });
  });

  it("runs a tool round trip: a tool_use with parsed input, then the tool_result answered with text", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }], usage },
      { type: "completion", content: "It is sunny in Paris.", usage },
    ]);
    const client = anthropic(await newChatKey());
    const ask: Anthropic.MessageParam = { role: "user", content: `Weather in Paris? ${script.marker}` };
    const first = await client.messages.create({ model: "m", max_tokens: 64, tools: [weather], messages: [ask] });
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content.find((block) => block.type === "tool_use");
    expect(call).toMatchObject({ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } });
    const second = await client.messages.create({
      model: "m",
      max_tokens: 64,
      tools: [weather],
      messages: [
        ask,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "Sunny, 24 C" }] },
      ],
    });
    expect(second.content).toEqual([{ type: "text", text: "It is sunny in Paris." }]);
    expect(second.stop_reason).toBe("end_turn");
    const sent = (await script.bodies())[1];
    expect(sent?.messages).toEqual([
      { role: "user", content: `Weather in Paris? ${script.marker}` },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "Sunny, 24 C" },
    ]);
  });

  it("streams with messages.stream: text events add up to finalMessage's text, with the stop reason and usage", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "The quick brown fox jumps.", chunkSize: 5, usage },
    ]);
    const stream = anthropic(await newChatKey()).messages.stream({
      model: "m",
      max_tokens: 64,
      messages: [{ role: "user", content: script.marker }],
    });
    const pieces: string[] = [];
    stream.on("text", (text) => pieces.push(text));
    const message = await stream.finalMessage();
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join("")).toBe("The quick brown fox jumps.");
    expect(message).toMatchObject({
      content: [{ type: "text", text: "The quick brown fox jumps." }],
      stop_reason: "end_turn",
      usage: { input_tokens: 12, output_tokens: 5 },
    });
  });

  it("streams a tool call as a tool_use block whose input finalMessage parses", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ id: "call_2", name: "get_weather", arguments: '{"city":"Oslo"}' }], usage },
    ]);
    const message = await anthropic(await newChatKey())
      .messages.stream({
        model: "m",
        max_tokens: 64,
        tools: [weather],
        messages: [{ role: "user", content: script.marker }],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([{ type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Oslo" } }]);
  });

  it("counts a request's input tokens with count_tokens (an estimate, larger for a longer prompt)", async () => {
    const client = anthropic(await newChatKey());
    const short = await client.messages.countTokens({ model: "m", messages: [{ role: "user", content: "Hi" }] });
    const long = await client.messages.countTokens({
      model: "m",
      tools: [weather],
      messages: [{ role: "user", content: "Hi ".repeat(200) }],
    });
    expect(short.input_tokens).toBeGreaterThan(0);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 100);
  });

  it("refuses a request without max_tokens with the SDK's BadRequestError and Anthropic's error body", async () => {
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: "m",
      max_tokens: 1,
      messages: [{ role: "user", content: "Hi" }],
    };
    Reflect.deleteProperty(params, "max_tokens");
    const error = await anthropic(await newChatKey())
      .messages.create(params)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error instanceof Anthropic.APIError ? error.error : null).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/^max_tokens: /) },
    });
    expect(error instanceof Anthropic.APIError ? error.requestID : null).toBeTruthy();
  });

  it("refuses what chat completions cannot carry (extended thinking) naming the param, and calls no upstream", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const error = await anthropic(await newChatKey())
      .messages.create({
        model: "m",
        max_tokens: 2048,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [{ role: "user", content: script.marker }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error instanceof Anthropic.APIError ? error.message : "").toContain("thinking: ");
    expect(await script.requests()).toEqual([]);
  });

  it("answers an upstream 429 as the SDK's RateLimitError, in Anthropic's shape with the upstream's message", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 429,
        headers: { "retry-after": "7" },
        body: { error: { message: "Rate limit reached for gpt-test.", type: "requests", code: "rate_limit_exceeded" } },
      },
    ]);
    const error = await anthropic(await newChatKey())
      .messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(error instanceof Anthropic.APIError ? [error.error, error.headers?.get("retry-after")] : null).toEqual([
      { type: "error", error: { type: "rate_limit_error", message: "Rate limit reached for gpt-test." } },
      "7",
    ]);
  });

  it("answers an upstream 500 as the SDK's InternalServerError of type api_error", async () => {
    const script = await scriptUpstream([{ type: "error", status: 500, body: "<html>boom</html>" }]);
    const error = await anthropic(await newChatKey())
      .messages.create({ model: "m", max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect(error instanceof Anthropic.APIError ? error.error : null).toMatchObject({
      type: "error",
      error: { type: "api_error" },
    });
  });

  it("records the upstream call's usage for the key, as the chat completions passthrough does", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok", usage }]);
    const key = await newChatKey("org-b");
    const through = workerWith();
    await anthropic(key, through).messages.create({
      model: "claude-usage",
      max_tokens: 8,
      messages: [{ role: "user", content: script.marker }],
    });
    await through.settled();
    const { results } = await env.DB.prepare(
      "SELECT org, endpoint, model, prompt_tokens, completion_tokens, outcome FROM usage_records WHERE key_id = ?",
    )
      .bind(key.keyId)
      .all();
    expect(results).toEqual([
      {
        org: "org-b",
        endpoint: "/v1/messages",
        model: "claude-usage",
        prompt_tokens: 12,
        completion_tokens: 5,
        outcome: "ok",
      },
    ]);
  });

  it("ends a stream whose upstream breaks mid-answer with an error event, which the SDK raises", async () => {
    const chunk = 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}';
    const script = await scriptUpstream([{ type: "sse", events: [chunk], eventDelayMs: 20, end: "destroy" }]);
    const error = await anthropic(await newChatKey())
      .messages.stream({ model: "m", max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error instanceof Error ? error.message : "").toContain("The upstream LLM stream failed before it ended");
  });
});

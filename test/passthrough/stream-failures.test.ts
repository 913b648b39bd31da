// Streams that go wrong after the client got its 200: each ends with `data: {"error":{...}}` and a
// close, which the `openai` SDK raises as an APIError, instead of hanging or ending as if complete.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { type ErrorBody, newChatKey, openai, post, sseEvents, workerWith } from "./harness";

const CHUNK = 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}';
const askStreaming = (marker: string) => ({
  model: "gpt-test",
  stream: true as const,
  messages: [{ role: "user" as const, content: marker }],
});

async function collect(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  const content: string[] = [];
  try {
    for await (const chunk of stream) content.push(chunk.choices[0]?.delta.content ?? "");
    return { content, error: null };
  } catch (error) {
    return { content, error };
  }
}

describe("stream failures", () => {
  it("makes the SDK throw when the upstream connection breaks mid-stream", async () => {
    const script = await scriptUpstream([{ type: "sse", events: [CHUNK], eventDelayMs: 50, end: "destroy" }]);
    const stream = await openai(await newChatKey()).chat.completions.create(askStreaming(script.marker));
    const { content, error } = await collect(stream);
    expect(content).toEqual(["Hel"]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ type: "upstream_error", code: "upstream_stream_failed" });
  });

  it("ends an event the upstream broke off half-way before sending the error frame", async () => {
    const half = 'data: {"id":"c1","choices":[{"ind';
    const script = await scriptUpstream([
      { type: "sse", events: [CHUNK], tail: half, eventDelayMs: 50, end: "destroy" },
    ]);
    const response = await post("/chat/completions", await newChatKey(), askStreaming(script.marker));
    const events = sseEvents(await response.text());
    expect(events.slice(0, 2)).toEqual([CHUNK, half]);
    expect(JSON.parse(events[2]?.slice("data: ".length) ?? "")).toMatchObject({
      error: { type: "upstream_error", code: "upstream_stream_failed" },
    });
    expect(events).toHaveLength(3);
  });

  it("ends a stream that stalls longer than the idle limit with an error frame", async () => {
    const script = await scriptUpstream([{ type: "sse", events: [CHUNK], end: "stall" }]);
    const through = workerWith({ PASSTHROUGH_IDLE_TIMEOUT_MS: "200" });
    const response = await post("/chat/completions", await newChatKey(), askStreaming(script.marker), {}, through);
    const events = sseEvents(await response.text());
    expect(events[0]).toBe(CHUNK);
    expect(JSON.parse(events[1]?.slice("data: ".length) ?? "")).toEqual({
      error: {
        message: "The upstream LLM stream stalled: nothing arrived for 200 ms (model route 'default').",
        type: "upstream_error",
        code: "upstream_idle_timeout",
        param: null,
      },
    } satisfies ErrorBody);
    expect(events).toHaveLength(2);
    await through.settled();
  });

  it("makes the SDK throw the idle-limit error of a stalled stream", async () => {
    const script = await scriptUpstream([{ type: "sse", events: [CHUNK], end: "stall" }]);
    const through = workerWith({ PASSTHROUGH_IDLE_TIMEOUT_MS: "200" });
    const stream = await openai(await newChatKey(), through).chat.completions.create(askStreaming(script.marker));
    const { error } = await collect(stream);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error instanceof Error ? error.message : "").toBe(
      "The upstream LLM stream stalled: nothing arrived for 200 ms (model route 'default').",
    );
    await through.settled();
  });

  it("ends a committed stream whose upstream never answers with keepalives and then a timeout frame", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const through = workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50", PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS: "400" });
    const response = await post("/chat/completions", await newChatKey(), askStreaming(script.marker), {}, through);
    expect(response.status).toBe(200);
    const events = sseEvents(await response.text());
    expect(events[0]).toBe(": keepalive");
    expect(events.slice(0, -1).every((e) => e === ": keepalive")).toBe(true);
    expect(JSON.parse(events.at(-1)?.slice("data: ".length) ?? "")).toMatchObject({
      error: {
        code: "upstream_timeout",
        message: "The upstream LLM sent nothing within 400 ms (model route 'default').",
      },
    });
    await through.settled();
  });

  it("sends an upstream error that arrives after the stream was committed as an error frame", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 500,
        delayFirstByteMs: 300,
        body: { error: { message: "Model overloaded.", type: "server_error", code: null, param: null } },
      },
    ]);
    const through = workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50" });
    const stream = await openai(await newChatKey(), through).chat.completions.create(askStreaming(script.marker));
    const { error } = await collect(stream);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error instanceof Error ? error.message : "").toBe("Model overloaded.");
    await through.settled();
  });

  it("puts the upstream's Retry-After into the error frame of a committed stream, beside its code", async () => {
    const script = await scriptUpstream([
      {
        type: "error",
        status: 429,
        delayFirstByteMs: 150,
        headers: { "retry-after": "7" },
        body: { error: { message: "Rate limit reached.", type: "requests", code: "rate_limit_exceeded", param: null } },
      },
    ]);
    const through = workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50" });
    const response = await post("/chat/completions", await newChatKey(), askStreaming(script.marker), {}, through);
    const last = sseEvents(await response.text()).at(-1) ?? "";
    const frame = JSON.parse(last.slice("data: ".length)) as { error: Record<string, unknown> };
    expect([response.status, frame.error.code, frame.error.retry_after_seconds]).toEqual([
      200,
      "rate_limit_exceeded",
      7,
    ]);
    await through.settled();
  });
});

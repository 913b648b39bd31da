// POST /v1/messages on an `anthropic` model route, seen by the official `@anthropic-ai/sdk`: the request relayed to
// the scripted Anthropic upstream byte for byte but for `model`, with our key and the client's anthropic-* headers,
// and the answer mirrored (JSON, the event stream event for event, errors with their status).
import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { scriptAnthropic } from "../fixtures/upstream";
import { anthropic, toAnthropic, weather } from "./anthropic-harness";
import { newChatKey, post, sseEvents, workerWith } from "./harness";

/** A stream's first event, as the scripted upstream writes a raw one. */
const messageStart = `event: message_start\ndata: ${JSON.stringify({
  type: "message_start",
  message: {
    id: "msg_raw",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 3, output_tokens: 1 },
  },
})}`;

/** What the scripted upstream received, the body parsed. */
async function sentTo(script: {
  requests(): Promise<{ path: string; headers: Record<string, string>; body: string }[]>;
}) {
  return (await script.requests()).map((r) => ({ path: r.path, headers: r.headers, body: r.body }));
}

describe("POST /v1/messages on an anthropic route", () => {
  it("answers messages.create with the upstream's message as it sent it", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", id: "msg_relay_1", content: [{ type: "text", text: "Hello from Claude." }] },
    ]);
    const message = await anthropic(await newChatKey()).messages.create({
      model: route,
      max_tokens: 64,
      messages: [{ role: "user", content: `Hi ${script.marker}` }],
    });
    expect(message).toMatchObject({
      id: "msg_relay_1",
      type: "message",
      model: "claude-test",
      content: [{ type: "text", text: "Hello from Claude." }],
      stop_reason: "end_turn",
    });
  });

  it("sends the client's body byte for byte but for model, which becomes the route's", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    const sent: string[] = [];
    await anthropic(await newChatKey(), { sent }).messages.create({
      model: route,
      max_tokens: 64,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      stop_sequences: ["\n\nHuman:"],
      metadata: { user_id: "user-7" },
      messages: [{ role: "user", content: [{ type: "text", text: `Hi ${script.marker}` }] }],
    });
    const [received] = await sentTo(script);
    const expected = JSON.stringify({ ...JSON.parse(sent[0] ?? "{}"), model: "claude-test" });
    expect([received?.path, received?.body]).toEqual(["/v1/messages", expected]);
  });

  it("sends our key as x-api-key, never the client's key", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    const key = await newChatKey();
    await anthropic(key).messages.create({
      model: route,
      max_tokens: 8,
      messages: [{ role: "user", content: script.marker }],
    });
    const [received] = await sentTo(script);
    const headers = received?.headers ?? {};
    expect([headers["x-api-key"], headers.authorization]).toEqual([env.TEST_ANTHROPIC_API_KEY, undefined]);
    expect(Object.values(headers).some((value) => value.includes(key.key))).toBe(false);
  });

  it("sends the client's anthropic-version and anthropic-beta over the route's version", async () => {
    const route = await toAnthropic({ anthropicVersion: "2024-01-01" });
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    const headers = { "anthropic-version": "2023-06-01", "anthropic-beta": "token-efficient-tools-2025-02-19" };
    const body = { model: route, max_tokens: 8, messages: [{ role: "user", content: script.marker }] };
    expect((await post("/messages", await newChatKey(), body, headers)).status).toBe(200);
    const [received] = await sentTo(script);
    expect([received?.headers["anthropic-version"], received?.headers["anthropic-beta"]]).toEqual([
      "2023-06-01",
      "token-efficient-tools-2025-02-19",
    ]);
  });

  it("sends the route's anthropic-version when the client sent none", async () => {
    const route = await toAnthropic({ anthropicVersion: "2024-01-01" });
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    const response = await post("/messages", await newChatKey(), {
      model: route,
      max_tokens: 8,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(response.status).toBe(200);
    const [received] = await sentTo(script);
    expect(received?.headers["anthropic-version"]).toBe("2024-01-01");
  });

  it("streams with messages.stream: text events add up to finalMessage's text, with the stop reason", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "text", text: "The quick brown fox jumps." }], chunkSize: 5 },
    ]);
    const stream = anthropic(await newChatKey()).messages.stream({
      model: route,
      max_tokens: 64,
      messages: [{ role: "user", content: script.marker }],
    });
    const pieces: string[] = [];
    stream.on("text", (text) => pieces.push(text));
    const message = await stream.finalMessage();
    expect(pieces.length).toBeGreaterThan(2);
    const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    expect([pieces.join(""), text, message.stop_reason]).toEqual([
      "The quick brown fox jumps.",
      "The quick brown fox jumps.",
      "end_turn",
    ]);
  });

  it("relays the upstream's stream event for event, pings included", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "Hi there" }] }]);
    const response = await post("/messages", await newChatKey(), {
      model: route,
      max_tokens: 8,
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const types = sseEvents(await response.text()).map((event) => /^event: (.*)$/m.exec(event)?.[1]);
    expect(types).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("keeps a silent stream alive with ping events, not SSE comments", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "text", text: "late" }], delayFirstByteMs: 250 },
    ]);
    const response = await post(
      "/messages",
      await newChatKey(),
      { model: route, max_tokens: 8, stream: true, messages: [{ role: "user", content: script.marker }] },
      {},
      workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50" }),
    );
    const events = sseEvents(await response.text());
    expect(events[0]).toBe('event: ping\ndata: {"type":"ping"}');
    expect(events.some((event) => event.startsWith(":"))).toBe(false);
    expect(events.at(-1)).toMatch(/^event: message_stop/);
  });

  it("runs a tool round trip: tool_use with its input, then the client's tool_result relayed as it sent it", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }],
      },
      { type: "message", content: [{ type: "text", text: "It is sunny in Paris." }] },
    ]);
    const client = anthropic(await newChatKey());
    const ask: Anthropic.MessageParam = { role: "user", content: `Weather in Paris? ${script.marker}` };
    const first = await client.messages.create({ model: route, max_tokens: 64, tools: [weather], messages: [ask] });
    expect([first.stop_reason, first.content]).toEqual([
      "tool_use",
      [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }],
    ]);
    const result: Anthropic.MessageParam = {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Sunny, 24 C" }],
    };
    const second = await client.messages.create({
      model: route,
      max_tokens: 64,
      tools: [weather],
      messages: [ask, { role: "assistant", content: first.content }, result],
    });
    expect(second.content).toEqual([{ type: "text", text: "It is sunny in Paris." }]);
    const [, body] = (await script.requests()).map(
      (r) => JSON.parse(r.body) as { messages: unknown[]; tools: unknown },
    );
    expect(body?.messages).toEqual([ask, { role: "assistant", content: first.content }, result]);
    expect(body?.tools).toEqual([weather]);
  });

  it("counts tokens with the upstream's count_tokens, the request relayed with the route's model", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([]);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: `Hi there ${script.marker}` }];
    const count = await anthropic(await newChatKey()).messages.countTokens({ model: route, messages });
    // The scripted upstream counts a quarter of the characters of its messages' JSON.
    expect(count.input_tokens).toBe(Math.ceil(JSON.stringify({ messages }).length / 4));
    const [received] = await sentTo(script);
    expect([received?.path, JSON.parse(received?.body ?? "{}").model, received?.headers["x-api-key"]]).toEqual([
      "/v1/messages/count_tokens",
      "claude-test",
      env.TEST_ANTHROPIC_API_KEY,
    ]);
  });

  it("mirrors the upstream's error in Anthropic's shape with its status and message", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "error", status: 400, error: { type: "invalid_request_error", message: "messages.0: bad block" } },
    ]);
    const error = await anthropic(await newChatKey())
      .messages.create({ model: route, max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error instanceof Anthropic.APIError ? error.error : null).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: "messages.0: bad block" },
    });
  });

  it("answers an upstream that refuses our key as a 502 api_error naming the route's secret, not a 401", async () => {
    const route = await toAnthropic({ apiKeySecret: "UPSTREAM_A_KEY" });
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "never" }] }]);
    const error = await anthropic(await newChatKey())
      .messages.create({ model: route, max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error instanceof Anthropic.APIError ? [error.status, error.error] : null).toEqual([
      502,
      { type: "error", error: { type: "api_error", message: expect.stringContaining("UPSTREAM_A_KEY") } },
    ]);
  });

  it("relays an error event in the middle of a stream, which the SDK raises", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "text", text: "partial answer" }],
        streamError: { type: "overloaded_error", message: "Overloaded", afterEvents: 3 },
      },
    ]);
    const error = await anthropic(await newChatKey())
      .messages.stream({ model: route, max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error instanceof Error ? error.message : "").toContain("Overloaded");
  });

  it("ends a relayed stream whose upstream stalls with Anthropic's timeout_error event", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "sse", events: [messageStart], end: "stall" }]);
    const response = await post(
      "/messages",
      await newChatKey(),
      { model: route, max_tokens: 8, stream: true, messages: [{ role: "user", content: script.marker }] },
      {},
      workerWith({ PASSTHROUGH_IDLE_TIMEOUT_MS: "200" }),
    );
    const last = sseEvents(await response.text()).at(-1) ?? "";
    expect(JSON.parse(/^data: (.*)$/m.exec(last)?.[1] ?? "{}")).toEqual({
      type: "error",
      error: { type: "timeout_error", message: expect.stringContaining("stalled") },
    });
  });

  it("ends a relayed stream whose upstream breaks mid-answer with Anthropic's error event", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "sse", events: [messageStart], eventDelayMs: 20, end: "destroy" }]);
    const response = await post("/messages", await newChatKey(), {
      model: route,
      max_tokens: 8,
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const last = sseEvents(await response.text()).at(-1) ?? "";
    expect(/^event: (.*)$/m.exec(last)?.[1]).toBe("error");
    expect(JSON.parse(/^data: (.*)$/m.exec(last)?.[1] ?? "{}")).toEqual({
      type: "error",
      error: { type: "api_error", message: expect.stringContaining("The upstream LLM stream failed before it ended") },
    });
  });
});

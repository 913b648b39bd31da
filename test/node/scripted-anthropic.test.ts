// The scripted Anthropic upstream (test/upstream/scripted-anthropic.ts) as the official SDK sees it: messages,
// tool use, the event stream through MessageStream, token counts, and errors in Anthropic's shape.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnthropicScriptStep } from "../upstream/script-types.ts";
import { type ScriptedAnthropic, startScriptedAnthropic } from "../upstream/scripted-anthropic.ts";

const API_KEY = "sk-ant-test-key";
const MODEL = "claude-scripted-1";

let upstream: ScriptedAnthropic;
let client: Anthropic;

beforeAll(async () => {
  upstream = await startScriptedAnthropic({ apiKey: API_KEY });
  client = new Anthropic({ apiKey: API_KEY, baseURL: upstream.url, maxRetries: 0 });
});

afterAll(async () => {
  await upstream?.close();
});

/** A script with these steps, and a user message that names it. */
function scripted(steps: AnthropicScriptStep[]) {
  const script = upstream.createScript(steps);
  const params = {
    model: MODEL,
    max_tokens: 256,
    messages: [{ role: "user" as const, content: `Hello ${script.marker}` }],
  };
  return { script, params };
}

const weatherTool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

/** The events of an SSE body, as `[event, data]`. */
function parseEvents(text: string): [string, Record<string, unknown>][] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((raw) => {
      const event = /^event: (.+)$/m.exec(raw)?.[1] ?? "";
      const data = /^data: (.+)$/m.exec(raw)?.[1] ?? "null";
      return [event, JSON.parse(data) as Record<string, unknown>];
    });
}

const rawPost = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${upstream.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("scripted Anthropic upstream", () => {
  it("answers messages.create with the scripted text message", async () => {
    const { params } = scripted([{ type: "message", content: [{ type: "text", text: "Hi there." }] }]);
    const message = await client.messages.create(params);
    expect(message.id).toMatch(/^msg_/);
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.model).toBe(MODEL);
    expect(message.content).toEqual([{ type: "text", text: "Hi there." }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.stop_sequence).toBeNull();
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it("answers a tool_use block with a toolu_ id, its parsed input and stop_reason tool_use", async () => {
    const { params } = scripted([
      {
        type: "message",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", name: "get_weather", input: { city: "Paris" } },
        ],
      },
    ]);
    const message = await client.messages.create({ ...params, tools: [weatherTool] });
    const toolUse = message.content.find((block) => block.type === "tool_use");
    expect(toolUse?.id).toMatch(/^toolu_/);
    expect(toolUse?.name).toBe("get_weather");
    expect(toolUse?.input).toEqual({ city: "Paris" });
    expect(message.stop_reason).toBe("tool_use");
  });

  it("answers with the scripted stop_reason, stop_sequence and usage", async () => {
    const { params } = scripted([
      {
        type: "message",
        content: [{ type: "text", text: "One, two" }],
        stopReason: "stop_sequence",
        stopSequence: "three",
        usage: { input_tokens: 42, output_tokens: 3 },
      },
    ]);
    const message = await client.messages.create({ ...params, stop_sequences: ["three"] });
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("three");
    expect(message.usage.input_tokens).toBe(42);
    expect(message.usage.output_tokens).toBe(3);
  });

  it("streams text that MessageStream's text events and finalMessage assemble", async () => {
    const text = "The quick brown fox jumps over the lazy dog.";
    const { params } = scripted([{ type: "message", content: [{ type: "text", text }], chunkSize: 5 }]);
    const pieces: string[] = [];
    const stream = client.messages.stream(params).on("text", (delta) => pieces.push(delta));
    const message = await stream.finalMessage();
    expect(pieces.length).toBe(Math.ceil(text.length / 5));
    expect(pieces.join("")).toBe(text);
    expect(message.content).toEqual([{ type: "text", text }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.id).toMatch(/^msg_/);
  });

  it("streams a tool_use input in input_json_delta fragments that finalMessage parses", async () => {
    const input = { city: "Paris", units: "celsius", days: 3 };
    const { params } = scripted([
      { type: "message", content: [{ type: "tool_use", name: "get_weather", input }], chunkSize: 6 },
    ]);
    const fragments: string[] = [];
    const stream = client.messages
      .stream({ ...params, tools: [weatherTool] })
      .on("inputJson", (partial) => fragments.push(partial));
    const message = await stream.finalMessage();
    expect(fragments.filter(Boolean).length).toBeGreaterThan(1);
    expect(fragments.join("")).toBe(JSON.stringify(input));
    const toolUse = message.content[0];
    expect(toolUse?.type).toBe("tool_use");
    expect(toolUse?.type === "tool_use" ? toolUse.input : undefined).toEqual(input);
    expect(toolUse?.type === "tool_use" ? toolUse.id : "").toMatch(/^toolu_/);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("streams Anthropic's event order: message_start, a ping after the first block starts, message_delta, message_stop", async () => {
    const { params } = scripted([
      {
        type: "message",
        content: [
          { type: "text", text: "Hi" },
          { type: "tool_use", name: "get_weather", input: { city: "Oslo" } },
        ],
        usage: { input_tokens: 10, output_tokens: 20 },
      },
    ]);
    const response = await rawPost(
      "/v1/messages",
      { ...params, stream: true },
      { "x-api-key": API_KEY, "anthropic-version": "2023-06-01" },
    );
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = parseEvents(await response.text());
    for (const [event, data] of events) expect(data.type).toBe(event);
    const types = events.map(([event]) => event);
    expect(types.slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"]);
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    const start = events[0]?.[1] as { message: { usage: { input_tokens: number; output_tokens: number } } };
    expect(start.message.usage).toMatchObject({ input_tokens: 10, output_tokens: 1 });
    const delta = events.at(-2)?.[1];
    expect(delta).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { output_tokens: 20 },
    });
    const blockStarts = events.filter(([event]) => event === "content_block_start").map(([, data]) => data);
    expect(blockStarts.map((data) => data.index)).toEqual([0, 1]);
    expect(blockStarts[1]?.content_block).toMatchObject({ type: "tool_use", name: "get_weather", input: {} });
  });

  it("counts tokens deterministically from the messages, system and tools", async () => {
    const params = {
      model: MODEL,
      system: "Be brief.",
      messages: [{ role: "user" as const, content: "How many tokens is this?" }],
      tools: [weatherTool],
    };
    const first = await client.messages.countTokens(params);
    const again = await client.messages.countTokens(params);
    const shorter = await client.messages.countTokens({ model: MODEL, messages: params.messages });
    expect(first.input_tokens).toBe(
      Math.ceil(JSON.stringify({ system: params.system, messages: params.messages, tools: params.tools }).length / 4),
    );
    expect(again.input_tokens).toBe(first.input_tokens);
    expect(shorter.input_tokens).toBeLessThan(first.input_tokens);
  });

  it("refuses a wrong API key: the SDK throws AuthenticationError", async () => {
    const { params } = scripted([{ type: "message", content: [{ type: "text", text: "unused" }] }]);
    const wrongKey = new Anthropic({ apiKey: "sk-ant-wrong", baseURL: upstream.url, maxRetries: 0 });
    const error = await wrongKey.messages.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    const apiError = error as InstanceType<typeof Anthropic.AuthenticationError>;
    expect(apiError.status).toBe(401);
    expect(apiError.type).toBe("authentication_error");
    expect(apiError.requestID).toMatch(/^req_/);
  });

  it("refuses a request without x-api-key with 401 authentication_error", async () => {
    const response = await rawPost(
      "/v1/messages",
      { model: MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
      { "anthropic-version": "2023-06-01" },
    );
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error).toEqual({ type: "authentication_error", message: "x-api-key header is required" });
  });

  it("answers a scripted 429 that the SDK throws as RateLimitError, with retry-after", async () => {
    const { params } = scripted([
      {
        type: "error",
        status: 429,
        error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit." },
        retryAfter: 7,
      },
    ]);
    const error = await client.messages.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const apiError = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(apiError.status).toBe(429);
    expect(apiError.type).toBe("rate_limit_error");
    expect(apiError.apiMessage).toBe("Number of requests has exceeded your rate limit.");
    expect(apiError.headers.get("retry-after")).toBe("7");
  });

  it("answers a scripted 529 that the SDK throws as OverloadedError", async () => {
    const { params } = scripted([
      { type: "error", status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
    ]);
    const error = await client.messages.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.OverloadedError);
    const apiError = error as InstanceType<typeof Anthropic.OverloadedError>;
    expect(apiError.status).toBe(529);
    expect(apiError.type).toBe("overloaded_error");
  });

  it("sends a scripted mid-stream error as an error event that fails the SDK's stream", async () => {
    const { params } = scripted([
      {
        type: "message",
        content: [{ type: "text", text: "Partial answer that never ends" }],
        chunkSize: 4,
        streamError: { type: "overloaded_error", message: "Overloaded", afterEvents: 5 },
      },
    ]);
    const pieces: string[] = [];
    const stream = client.messages.stream(params).on("text", (delta) => pieces.push(delta));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe("overloaded_error");
    // message_start, content_block_start, ping, then two text deltas before the error.
    expect(pieces).toEqual(["Part", "ial "]);
  });

  it("refuses a request without anthropic-version with 400 in Anthropic's error shape", async () => {
    const response = await rawPost(
      "/v1/messages",
      { model: MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
      { "x-api-key": API_KEY },
    );
    expect(response.status).toBe(400);
    const requestId = response.headers.get("request-id");
    expect(requestId).toMatch(/^req_/);
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "anthropic-version: header is required" },
      request_id: requestId,
    });
  });

  it("refuses a request without max_tokens with 400 invalid_request_error naming the field", async () => {
    const response = await rawPost(
      "/v1/messages",
      { model: MODEL, messages: [{ role: "user", content: "hi" }] },
      { "x-api-key": API_KEY, "anthropic-version": "2023-06-01" },
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error).toEqual({ type: "invalid_request_error", message: "max_tokens: Field required" });
  });

  it("refuses empty messages with 400 invalid_request_error naming the field", async () => {
    const error = await client.messages.create({ model: MODEL, max_tokens: 16, messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).apiMessage).toMatch(/^messages: /);
  });

  it("answers an unknown path with 404 not_found_error", async () => {
    const response = await rawPost("/v1/nothing-here", {}, { "x-api-key": API_KEY, "anthropic-version": "2023-06-01" });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { type: string; error: { type: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("not_found_error");
  });

  it("records each request's body, anthropic-version header and times", async () => {
    const { script, params } = scripted([{ type: "message", content: [{ type: "text", text: "Recorded." }] }]);
    await client.messages.create({ ...params, system: "You are terse." });
    const [request, ...rest] = upstream.requests(script.id);
    expect(rest).toEqual([]);
    expect(request?.path).toBe("/v1/messages");
    expect(request?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      model: MODEL,
      max_tokens: 256,
      system: "You are terse.",
    });
    expect(request?.firstByteAt).toBeGreaterThanOrEqual(request?.receivedAt ?? Number.POSITIVE_INFINITY);
  });

  it("takes scripts over HTTP as the OpenAI one does", async () => {
    const created = await fetch(`${upstream.url}/__scripts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ steps: [{ type: "message", content: [{ type: "text", text: "Over HTTP." }] }] }),
    });
    const script = (await created.json()) as { id: string; marker: string };
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 16,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(message.content).toEqual([{ type: "text", text: "Over HTTP." }]);
    const recorded = (await (await fetch(`${upstream.url}/__scripts/${script.id}/requests`)).json()) as {
      requests: unknown[];
    };
    expect(recorded.requests).toHaveLength(1);
  });

  it("lists its models as the Models API does, and finds one by id", async () => {
    const page = await client.models.list({ limit: 1000 });
    expect(page.data.map((m) => m.id)).toEqual(["claude-scripted"]);
    expect((await client.models.retrieve("claude-scripted")).display_name).toBe("Claude Scripted");
  });

  it("answers an unscripted request on a model it does not serve 404 not_found_error, naming the model", async () => {
    const refused = await client.messages
      .create({ model: "demo", max_tokens: 1, messages: [{ role: "user", content: "ping" }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.NotFoundError);
    expect((refused as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: "error",
      error: { type: "not_found_error", message: "model: demo" },
    });
  });

  it("answers an unscripted request on a model it serves briefly", async () => {
    const message = await client.messages.create({
      model: "claude-scripted",
      max_tokens: 1,
      messages: [{ role: "user", content: "ping" }],
      tools: [weatherTool],
    });
    expect([message.content, message.stop_reason]).toEqual([[{ type: "text", text: "ok" }], "max_tokens"]);
  });
});

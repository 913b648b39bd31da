// The agent on Anthropic's Messages wire (POST /agent/v1/messages) driven by the official `@anthropic-ai/sdk` (base
// URL <host>/agent: it adds /v1/messages) and the AI SDK's Anthropic provider (base URL <host>/agent/v1), the model
// scripted: answers, streams, a client tool round trip by the resent history and by X-Aptix-Session, errors in
// Anthropic's shape.
import { env, exports } from "cloudflare:workers";
import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";
import { newChatKey } from "../passthrough/harness";

const ORIGIN = "http://aptix.test";
const fetchWorker = (input: string | URL | Request, init?: RequestInit) => exports.default.fetch(input, init);

function client(key: string = TEST_KEYS.chat.key, fetch = fetchWorker): Anthropic {
  return new Anthropic({ apiKey: key, baseURL: `${ORIGIN}/agent`, maxRetries: 0, fetch });
}

const weather: Anthropic.Tool = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** The scripted model asks for the weather in Paris, then answers with what the tool said. */
function weatherScript() {
  return scriptUpstream([
    { type: "completion", toolCalls: [{ name: "get_weather", arguments: '{"city": "Paris"}' }] },
    { type: "completion", content: "It is sunny in Paris." },
  ]);
}

/** A raw POST to the door, its answer parsed. */
/** The first message of the weather round trip, answered with its response's headers. */
function askWeather(marker: string) {
  return client()
    .messages.create({
      model: "aptix-agent/general",
      max_tokens: 64,
      tools: [weather],
      messages: [{ role: "user", content: `weather in Paris? ${marker}` }],
    })
    .withResponse();
}

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await exports.default.fetch(`${ORIGIN}/agent/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": TEST_KEYS.chat.key, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
}

const SESSION = /^[0-9a-f]{64}$/;

describe("/agent/v1/messages with the Anthropic SDK", () => {
  it("is reached at <host>/agent/v1/messages when the SDK's base URL is <host>/agent", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Here." }]);
    const urls: string[] = [];
    const recording = (input: string | URL | Request, init?: RequestInit) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return fetchWorker(input, init);
    };
    await client(TEST_KEYS.chat.key, recording).messages.create({
      model: "aptix-agent/general",
      max_tokens: 64,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(urls).toEqual([`${ORIGIN}/agent/v1/messages`]);
  });

  it("answers messages.create with a message of the agent's text, and names its session", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        content: "Hello from the agent.",
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
      },
    ]);
    const { data, response } = await client()
      .messages.create({
        model: "aptix-agent/general",
        max_tokens: 64,
        messages: [{ role: "user", content: `hi ${script.marker}` }],
      })
      .withResponse();
    expect(data).toMatchObject({
      type: "message",
      role: "assistant",
      model: "aptix-agent/general",
      content: [{ type: "text", text: "Hello from the agent." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 4 },
    });
    expect(data.id).toMatch(/^msg_/);
    expect(response.headers.get("x-aptix-session")).toMatch(SESSION);
  });

  it("streams the answer with messages.stream: text events add up to finalMessage's text", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Streaming from the agent.", chunkSize: 5 }]);
    const stream = client().messages.stream({
      model: "aptix-agent/general",
      max_tokens: 64,
      messages: [{ role: "user", content: `stream ${script.marker}` }],
    });
    const pieces: string[] = [];
    stream.on("text", (text) => pieces.push(text));
    const { response } = await stream.withResponse();
    const message = await stream.finalMessage();
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("Streaming from the agent.");
    expect(message).toMatchObject({
      content: [{ type: "text", text: "Streaming from the agent." }],
      stop_reason: "end_turn",
    });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("x-aptix-session")).toMatch(SESSION);
  });

  it("counts a request's input tokens with count_tokens (an estimate, larger for a longer prompt)", async () => {
    const short = await client().messages.countTokens({
      model: "aptix-agent/general",
      messages: [{ role: "user", content: "Hi" }],
    });
    const long = await client().messages.countTokens({
      model: "aptix-agent/general",
      tools: [weather],
      messages: [{ role: "user", content: "Hi ".repeat(200) }],
    });
    expect(short.input_tokens).toBeGreaterThan(0);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 100);
  });
});

describe("/agent/v1/messages client tools with the Anthropic SDK", () => {
  it("hands the client's tool call over as tool_use, and the resent history with its tool_result resumes the session", async () => {
    const script = await weatherScript();
    const ask: Anthropic.MessageParam = { role: "user", content: `weather in Paris? ${script.marker}` };
    const first = await client()
      .messages.create({ model: "aptix-agent/general", max_tokens: 64, tools: [weather], messages: [ask] })
      .withResponse();
    expect(first.data.stop_reason).toBe("tool_use");
    const call = first.data.content.find((block) => block.type === "tool_use");
    expect(call).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Paris" } });
    if (call?.type !== "tool_use") throw new Error("no tool_use block");
    const second = await client()
      .messages.create({
        model: "aptix-agent/general",
        max_tokens: 64,
        tools: [weather],
        messages: [
          ask,
          { role: "assistant", content: first.data.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny, 24 °C" }] },
        ],
      })
      .withResponse();
    expect(second.data.content).toEqual([{ type: "text", text: "It is sunny in Paris." }]);
    expect(second.data.stop_reason).toBe("end_turn");
    expect(second.response.headers.get("x-aptix-session")).toBe(first.response.headers.get("x-aptix-session"));
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toBe('"sunny, 24 °C"');
  });

  it("resumes the turn from only the tool_result message when X-Aptix-Session names the session", async () => {
    const script = await weatherScript();
    const first = await askWeather(script.marker);
    const call = first.data.content.find((block) => block.type === "tool_use");
    if (call?.type !== "tool_use") throw new Error("no tool_use block");
    const sessionId = first.response.headers.get("x-aptix-session") ?? "";
    const second = await client()
      .messages.create(
        {
          model: "aptix-agent/general",
          max_tokens: 64,
          tools: [weather],
          messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny" }] }],
        },
        { headers: { "x-aptix-session": sessionId } },
      )
      .withResponse();
    expect(second.data.content).toEqual([{ type: "text", text: "It is sunny in Paris." }]);
    expect(second.response.headers.get("x-aptix-session")).toBe(sessionId);
  });

  it("streams the round trip: a tool_use block whose input finalMessage parses, then the streamed answer", async () => {
    const script = await weatherScript();
    const ask: Anthropic.MessageParam = { role: "user", content: `weather in Paris? ${script.marker}` };
    const firstStream = client().messages.stream({
      model: "aptix-agent/general",
      max_tokens: 64,
      tools: [weather],
      messages: [ask],
    });
    const first = await firstStream.finalMessage();
    const firstSession = (await firstStream.withResponse()).response.headers.get("x-aptix-session");
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content.find((block) => block.type === "tool_use");
    expect(call).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Paris" } });
    if (call?.type !== "tool_use") throw new Error("no tool_use block");
    const secondStream = client().messages.stream({
      model: "aptix-agent/general",
      max_tokens: 64,
      tools: [weather],
      messages: [
        ask,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "sunny" }] },
      ],
    });
    const second = await secondStream.finalMessage();
    expect(second.content).toEqual([{ type: "text", text: "It is sunny in Paris." }]);
    expect(second.stop_reason).toBe("end_turn");
    expect((await secondStream.withResponse()).response.headers.get("x-aptix-session")).toBe(firstSession);
  });
});

describe("/agent/v1/messages conversations with the Anthropic SDK", () => {
  it("asks for approval in words with end_turn, and runs the call when the next message says yes", async () => {
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
      { type: "completion", content: "Done with the greeting." },
    ]);
    const ask: Anthropic.MessageParam = { role: "user", content: `greet Dana ${script.marker}` };
    const asked = await client().messages.create({ model: `aptix-agent/${mode}`, max_tokens: 64, messages: [ask] });
    expect(asked.stop_reason).toBe("end_turn");
    expect(asked.content[0]?.type === "text" ? asked.content[0].text : "").toMatch(
      /^I need your approval for this tool call:\n1\. agent_hello_world with \{"name":"Dana"\}/,
    );
    const done = await client().messages.create({
      model: `aptix-agent/${mode}`,
      max_tokens: 64,
      messages: [ask, { role: "assistant", content: asked.content }, { role: "user", content: "yes" }],
    });
    expect(done.content).toEqual([{ type: "text", text: "Done with the greeting." }]);
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("Hello, Dana");
  });

  it("takes a request over 1 MiB, as tool results with whole files make them", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Read it." }]);
    const message = await client().messages.create({
      model: "aptix-agent/general",
      max_tokens: 64,
      messages: [{ role: "user", content: `${"x".repeat(1_500_000)} ${script.marker}` }],
    });
    expect(message.content).toEqual([{ type: "text", text: "Read it." }]);
    // 1.5 MB through the whole turn takes about 3.4 s alone on these machines (1.9 s with the org's memory off, and
    // before issue 44), more beside the suite's other files: its own limit, not the default 5 s.
  }, 20_000);
});

describe("/agent/v1/messages errors in Anthropic's shape", () => {
  it("answers a failed turn's model with 502 api_error, naming the session", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 401, body: { error: { message: "bad key", type: "invalid_request_error" } } },
    ]);
    const answer = await post({
      model: "aptix-agent/general",
      max_tokens: 8,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(answer.status).toBe(502);
    expect(answer.body).toEqual({
      type: "error",
      error: { type: "api_error", message: expect.stringContaining("agent's turn failed") },
    });
    expect(answer.headers.get("x-aptix-session")).toMatch(SESSION);
  });

  it("answers 409 as invalid_request_error for a new message while the client's tool calls wait", async () => {
    const script = await weatherScript();
    const first = await askWeather(script.marker);
    expect(first.data.stop_reason).toBe("tool_use");
    const answer = await post(
      {
        model: "aptix-agent/general",
        max_tokens: 64,
        tools: [weather],
        messages: [{ role: "user", content: "hello?" }],
      },
      { "x-aptix-session": first.response.headers.get("x-aptix-session") ?? "" },
    );
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  it("answers 404 not_found_error for another org's X-Aptix-Session", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Mine." }]);
    const { response } = await client()
      .messages.create({
        model: "aptix-agent/general",
        max_tokens: 64,
        messages: [{ role: "user", content: script.marker }],
      })
      .withResponse();
    const answer = await post(
      { model: "aptix-agent/general", max_tokens: 64, messages: [{ role: "user", content: "theirs?" }] },
      { "x-api-key": TEST_KEYS.otherOrg.key, "x-aptix-session": response.headers.get("x-aptix-session") ?? "" },
    );
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(answer.headers.get("request-id")).toBeTruthy();
  });

  it("answers 404 not_found_error naming the known models for a mode that does not exist", async () => {
    const error = await client()
      .messages.create({ model: "aptix-agent/nope", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error instanceof Anthropic.APIError ? error.error : null).toEqual({
      type: "error",
      error: { type: "not_found_error", message: expect.stringMatching(/^model: .*aptix-agent\/general/) },
    });
  });

  it("refuses bad input with 400 invalid_request_error naming the field, and creates no session", async () => {
    const org = `org-${crypto.randomUUID()}`;
    const key = (await newChatKey(org)).key;
    const image = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };
    const cases: [unknown, RegExp][] = [
      [{ model: "aptix-agent/general", messages: [{ role: "user", content: "hi" }] }, /^max_tokens: /],
      [
        { model: "aptix-agent/general", max_tokens: 8, top_k: 5, messages: [{ role: "user", content: "hi" }] },
        /^top_k: /,
      ],
      [
        {
          model: "aptix-agent/general",
          max_tokens: 8,
          messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, image] }],
        },
        /^messages\[0\]\.content\[1\]: /,
      ],
    ];
    const answers = [];
    for (const [body] of cases) answers.push(await post(body, { "x-api-key": key }));
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400]);
    answers.forEach((answer, i) => {
      expect(answer.body).toEqual({
        type: "error",
        error: { type: "invalid_request_error", message: expect.stringMatching(cases[i]?.[1] ?? /^$/) },
      });
    });
    const sessions = await env.DB.prepare("SELECT COUNT(*) AS n FROM session_index WHERE org = ?").bind(org).first();
    expect(sessions).toEqual({ n: 0 });
  });

  it("refuses a client tool the tool contract refuses with 400 naming it as the Messages request does", async () => {
    const answer = await post({
      model: "aptix-agent/general",
      max_tokens: 8,
      tools: [{ name: "bad name!", input_schema: { type: "object" } }],
      messages: [{ role: "user", content: "hi" }],
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringMatching(/^tools\.0\.name: /) },
    });
  });

  it("answers a model that fails mid-stream with an error event, which the SDK raises", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 401, body: { error: { message: "bad key", type: "invalid_request_error" } } },
    ]);
    const error = await client()
      .messages.stream({
        model: "aptix-agent/general",
        max_tokens: 8,
        messages: [{ role: "user", content: script.marker }],
      })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    // Raised from the stream's error event (an answer refused before the stream would carry its HTTP status).
    expect(error instanceof Anthropic.APIError ? [error.status, error.error] : null).toEqual([
      undefined,
      { type: "error", error: { type: "api_error", message: expect.stringContaining("agent's turn failed") } },
    ]);
  });
});

describe("/agent/v1/messages with the AI SDK's Anthropic provider", () => {
  it("runs the client's tool locally over several steps and gets the agent's answer", async () => {
    const script = await weatherScript();
    const anthropic = createAnthropic({
      baseURL: `${ORIGIN}/agent/v1`,
      apiKey: TEST_KEYS.chat.key,
      fetch: fetchWorker,
    });
    const cities: string[] = [];
    const result = await generateText({
      model: anthropic("aptix-agent/general"),
      prompt: `weather in Paris? ${script.marker}`,
      tools: {
        get_weather: tool({
          description: "The weather in a city.",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            cities.push(city);
            return { city, sky: "sunny" };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("It is sunny in Paris.");
    expect(result.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(cities).toEqual(["Paris"]);
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(JSON.parse(toolMessage?.content ?? "null")).toEqual({ city: "Paris", sky: "sunny" });
  });
});

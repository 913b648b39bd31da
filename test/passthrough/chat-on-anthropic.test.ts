// POST /v1/chat/completions on an `anthropic` model route, seen by the official `openai` client: the request
// translated to the Messages API (chatRequestToMessages) for the scripted Anthropic upstream, the answer back as a
// chat completion (streams as chunks ending with [DONE], the usage chunk only when asked), errors in OpenAI's shape.
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { toUpstreamB } from "../routing/fixtures";
import { anthropicModelNotFound, anthropicPromptTooLong } from "../upstream/script-types";
import { toAnthropic, usageRows } from "./anthropic-harness";
import { newChatKey, openai, post, sseEvents, workerWith } from "./harness";

const weather: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

interface SentMessages {
  model: string;
  max_tokens: number;
  system?: string;
  messages: { role: string; content: unknown }[];
  tools?: { name: string; input_schema: unknown }[];
}

describe("POST /v1/chat/completions on an anthropic route", () => {
  it("answers chat.completions.create with the upstream's text, stop and its usage", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "text", text: "Hello there." }],
        usage: { input_tokens: 12, output_tokens: 5 },
      },
    ]);
    const completion = await openai(await newChatKey()).chat.completions.create({
      model: route,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: `Hi ${script.marker}` },
      ],
    });
    expect([
      completion.object,
      completion.choices[0]?.message.content,
      completion.choices[0]?.finish_reason,
      completion.usage?.prompt_tokens,
      completion.usage?.completion_tokens,
    ]).toEqual(["chat.completion", "Hello there.", "stop", 12, 5]);
  });

  it("sends the upstream a Messages request: system apart, max_tokens, the route's model, our x-api-key", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    await openai(await newChatKey()).chat.completions.create({
      model: route,
      max_completion_tokens: 77,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: `Hi ${script.marker}` },
      ],
    });
    const [received] = await script.requests();
    const body = JSON.parse(received?.body ?? "{}") as SentMessages;
    expect([received?.path, received?.headers["x-api-key"], received?.headers["anthropic-version"]]).toEqual([
      "/v1/messages",
      env.TEST_ANTHROPIC_API_KEY,
      "2023-06-01",
    ]);
    expect([body.model, body.max_tokens, body.system, body.messages]).toEqual([
      "claude-test",
      77,
      "Be brief.",
      [{ role: "user", content: `Hi ${script.marker}` }],
    ]);
  });

  it("streams chunks whose deltas add up to the text, with a last usage chunk when include_usage asks", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "text", text: "The quick brown fox jumps." }],
        chunkSize: 5,
        usage: { input_tokens: 9, output_tokens: 6 },
      },
    ]);
    const stream = await openai(await newChatKey()).chat.completions.create({
      model: route,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: script.marker }],
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    const finish = chunks.map((c) => c.choices[0]?.finish_reason).find((reason) => reason);
    const last = chunks.at(-1);
    expect([text, finish, last?.choices, last?.usage?.prompt_tokens, last?.usage?.completion_tokens]).toEqual([
      "The quick brown fox jumps.",
      "stop",
      [],
      9,
      6,
    ]);
  });

  it("streams no usage chunk when the client did not ask, ending with [DONE]", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "short" }] }]);
    const response = await post("/chat/completions", await newChatKey(), {
      model: route,
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const data = sseEvents(await response.text())
      .filter((event) => event.startsWith("data: "))
      .map((event) => event.slice(6));
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { usage?: unknown; choices: unknown[] });
    expect(chunks.some((chunk) => "usage" in chunk || chunk.choices.length === 0)).toBe(false);
  });

  it("keeps a silent stream alive with keepalive comments, as on any chat completions stream", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "text", text: "late" }], delayFirstByteMs: 250 },
    ]);
    const response = await post(
      "/chat/completions",
      await newChatKey(),
      { model: route, stream: true, messages: [{ role: "user", content: script.marker }] },
      {},
      workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50" }),
    );
    const events = sseEvents(await response.text());
    expect([events[0], events.at(-1)]).toEqual([": keepalive", "data: [DONE]"]);
  });

  it("runs a tool call round trip: tool_calls with JSON arguments, then the tool message as a tool_result", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "tool_use", id: "toolu_7", name: "get_weather", input: { city: "Oslo" } }] },
      { type: "message", content: [{ type: "text", text: "Cold in Oslo." }] },
    ]);
    const client = openai(await newChatKey());
    const ask: OpenAI.ChatCompletionMessageParam = { role: "user", content: `Weather? ${script.marker}` };
    const first = await client.chat.completions.create({ model: route, tools: [weather], messages: [ask] });
    const choice = first.choices[0];
    expect([choice?.finish_reason, choice?.message.tool_calls]).toEqual([
      "tool_calls",
      [{ id: "toolu_7", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
    ]);
    const second = await client.chat.completions.create({
      model: route,
      tools: [weather],
      messages: [
        ask,
        { role: "assistant", content: null, tool_calls: choice?.message.tool_calls ?? [] },
        { role: "tool", tool_call_id: "toolu_7", content: "-3 C" },
      ],
    });
    expect(second.choices[0]?.message.content).toBe("Cold in Oslo.");
    const sent = JSON.parse((await script.requests())[1]?.body ?? "{}") as SentMessages;
    expect(sent.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_7", name: "get_weather", input: { city: "Oslo" } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_7", content: "-3 C" }] },
    ]);
    expect(sent.tools?.map((tool) => tool.name)).toEqual(["get_weather"]);
  });

  it("streams a tool call whose argument fragments add up to its JSON arguments", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "tool_use", id: "toolu_8", name: "get_weather", input: { city: "Lisbon" } }],
        chunkSize: 4,
      },
    ]);
    const stream = await openai(await newChatKey()).chat.completions.create({
      model: route,
      stream: true,
      tools: [weather],
      messages: [{ role: "user", content: script.marker }],
    });
    let args = "";
    let name = "";
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? "";
        args += call.function?.arguments ?? "";
      }
    }
    expect([name, JSON.parse(args)]).toEqual(["get_weather", { city: "Lisbon" }]);
  });

  for (const [what, step, expected] of [
    [
      "a prompt too long as OpenAI's 400 context_length_exceeded",
      { type: "error", status: 400, error: anthropicPromptTooLong(210_000, 200_000) },
      [400, "context_length_exceeded", "invalid_request_error", null],
    ],
    [
      "a model it does not have as OpenAI's 404 model_not_found",
      { type: "error", status: 404, error: anthropicModelNotFound("claude-test") },
      [404, "model_not_found", "not_found_error", null],
    ],
    [
      "a rate limit as a 429 with its Retry-After",
      { type: "error", status: 429, error: { type: "rate_limit_error", message: "Slow down." }, retryAfter: 7 },
      [429, "rate_limit_error", "rate_limit_error", "7"],
    ],
  ] as const) {
    it(`answers ${what}`, async () => {
      const route = await toAnthropic();
      const script = await scriptAnthropic([step]);
      const response = await post("/chat/completions", await newChatKey(), {
        model: route,
        messages: [{ role: "user", content: `Hi ${script.marker}` }],
      });
      const body = (await response.json()) as { error: { code: string; type: string } };
      expect([response.status, body.error.code, body.error.type, response.headers.get("retry-after")]).toEqual([
        ...expected,
      ]);
    });
  }

  it("answers the upstream's error in OpenAI's shape, Anthropic's error type as its code", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "error", status: 400, error: { type: "invalid_request_error", message: "messages: too long" } },
    ]);
    const error = await openai(await newChatKey())
      .chat.completions.create({ model: route, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error instanceof OpenAI.APIError ? [error.message, error.code, error.type] : null).toEqual([
      "400 messages: too long",
      "invalid_request_error",
      "invalid_request_error",
    ]);
  });

  it("answers Anthropic's 529 overloaded as a 503 to an OpenAI client", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "error", status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
    ]);
    const error = await openai(await newChatKey())
      .chat.completions.create({ model: route, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? [error.status, error.code] : null).toEqual([503, "overloaded_error"]);
  });

  it("refuses what the Messages API cannot carry (n above 1) with a 400 naming n, and calls no upstream", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "never" }] }]);
    const error = await openai(await newChatKey())
      .chat.completions.create({ model: route, n: 2, messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? [error.status, error.param] : null).toEqual([400, "n"]);
    expect(await script.requests()).toEqual([]);
  });

  it("fails over from an OpenAI-compatible route answering 500 to an anthropic fallback, answering a chat completion", async () => {
    const anthropicRoute = await toAnthropic();
    const route = await toUpstreamB({ fallbacks: [anthropicRoute] });
    const b = await scriptUpstream([{ type: "error", status: 500, body: "boom" }], env.TEST_UPSTREAM_B_URL);
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "from Claude" }] }]);
    const { data, response } = await openai(await newChatKey())
      .chat.completions.create({ model: route, messages: [{ role: "user", content: `${b.marker} ${script.marker}` }] })
      .withResponse();
    expect([data.choices[0]?.message.content, response.headers.get("x-aptix-route")]).toEqual([
      "from Claude",
      anthropicRoute,
    ]);
  });

  it("records the usage row of the anthropic route with its input and output tokens", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "text", text: "ok" }], usage: { input_tokens: 21, output_tokens: 4 } },
    ]);
    const key = await newChatKey();
    const through = workerWith();
    await openai(key, through).chat.completions.create({
      model: route,
      messages: [{ role: "user", content: script.marker }],
    });
    await through.settled();
    expect(await usageRows(key)).toEqual([
      { route, model: "claude-test", prompt_tokens: 21, completion_tokens: 4, total_tokens: 25, outcome: "ok" },
    ]);
  });

  it("ends a stream whose Anthropic upstream sends an error event with an error the SDK raises", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "text", text: "partial answer" }],
        streamError: { type: "overloaded_error", message: "Overloaded", afterEvents: 3 },
      },
    ]);
    const stream = await openai(await newChatKey()).chat.completions.create({
      model: route,
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // Read to the end.
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error instanceof Error ? error.message : "").toContain("Overloaded");
  });
});

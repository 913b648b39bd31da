// Workers AI against a stand-in AI binding that answers the shapes Cloudflare documents: the older models'
// `{response, tool_calls: [{name, arguments: object}], usage}`, the newer ones' whole chat.completion, event
// streams of `{"response": ...}` pieces (or OpenAI chunks) ending in usage and [DONE], and the errors `run`
// throws ("3040: Capacity temporarily exceeded"). The loop reads it through its ChatModel (the binding's model
// events, folded), the passthrough through /v1 (its OpenAI face), with the official openai client.
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ModelError } from "../../src/llm/chat-model";
import type { WorkersAiBinding } from "../../src/llm/workers-ai";
import { defaultRoute, type ModelRoute } from "../../src/routing/model-routes";
import { routeChatModel } from "../../src/routing/route-models";
import { workerKeys } from "../../src/routing/route-table";
import { parseSettings } from "../../src/settings";
import { BASE_URL, newChatKey, workerWith } from "../passthrough/harness";
import { putRoute } from "../routing/fixtures";
import { events, MODEL, standIn, USAGE } from "./workers-ai-stand-in";

const route: ModelRoute = {
  ...defaultRoute({ llm: parseSettings({}).llm, workersAiModel: MODEL }),
  name: "edge",
  source: "stored",
};

function modelOf(binding: WorkersAiBinding) {
  return routeChatModel(route, { AI: binding }, 5_000, workerKeys({}));
}

const hi = [{ role: "user" as const, content: "hi" }];

describe("Workers AI for the loop", () => {
  it("reads a plain answer, with its usage", async () => {
    const { binding, runs } = standIn({ response: "Hello there.", tool_calls: [], usage: USAGE });
    const response = await modelOf(binding).complete({ messages: hi });
    expect(response).toEqual({
      content: "Hello there.",
      toolCalls: [],
      finishReason: "stop",
      usage: { promptTokens: 9, completionTokens: 4, totalTokens: 13 },
    });
    expect(runs).toEqual([{ model: MODEL, inputs: { messages: hi, stream: false } }]);
  });

  it("reads the older models' tool calls (arguments as an object, no id) as calls with ids and JSON arguments", async () => {
    const { binding, runs } = standIn({
      response: null,
      tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
    });
    const tools = [
      { type: "function" as const, function: { name: "get_weather", description: "Weather.", parameters: {} } },
    ];
    const response = await modelOf(binding).complete({ messages: hi, tools });
    expect(response.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_/), name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
    expect([response.finishReason, runs[0]?.inputs.tools]).toEqual(["tool_calls", tools]);
  });

  it("reads a newer model's whole chat.completion, tool calls included", async () => {
    const { binding } = standIn({
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Checking.",
            tool_calls: [{ id: "t1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: USAGE,
    });
    const response = await modelOf(binding).complete({ messages: hi });
    expect([response.content, response.toolCalls]).toEqual([
      "Checking.",
      [{ id: "t1", name: "lookup", arguments: '{"q":"x"}' }],
    ]);
  });

  it("reads a JSON-mode answer whose `response` is an object as its JSON text", async () => {
    const { binding } = standIn({ response: { answer: 42 } });
    expect((await modelOf(binding).complete({ messages: hi })).content).toBe('{"answer":42}');
  });

  it("streams the text pieces of an event stream and reads its final usage", async () => {
    const { binding, runs } = standIn(
      events({ response: "Hel", p: "abc" }, { response: "lo." }, { response: "", usage: USAGE }, "[DONE]"),
    );
    const pieces: string[] = [];
    const response = await modelOf(binding).complete({ messages: hi, onTextDelta: (t) => pieces.push(t) });
    expect([pieces, response.content, response.usage?.totalTokens]).toEqual([["Hel", "lo."], "Hello.", 13]);
    expect(runs[0]?.inputs.stream).toBe(true);
  });

  it("reads tool calls from an event stream, whole or as OpenAI fragments", async () => {
    const { binding } = standIn(
      events(
        { tool_calls: [{ name: "get_weather", arguments: { city: "Oslo" } }] },
        {
          choices: [
            { delta: { tool_calls: [{ index: 1, id: "f1", function: { name: "lookup", arguments: '{"q":' } }] } },
          ],
        },
        {
          choices: [
            { delta: { tool_calls: [{ index: 1, function: { arguments: '"y"}' } }] }, finish_reason: "tool_calls" },
          ],
        },
        "[DONE]",
      ),
    );
    const response = await modelOf(binding).complete({ messages: hi, onTextDelta: () => {} });
    expect(response.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
      ["get_weather", '{"city":"Oslo"}'],
      ["lookup", '{"q":"y"}'],
    ]);
  });

  it("treats an event stream that ends without [DONE] or a finish as a bad response, not an answer", async () => {
    const { binding } = standIn(events({ response: "Half an ans" }));
    const failed = await modelOf(binding)
      .complete({ messages: hi, onTextDelta: () => {}, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ModelError);
    expect((failed as ModelError).code).toBe("model_bad_response");
  });

  it("ends a binding stream that stalls with model_timeout, and cancels the binding's stream", async () => {
    let cancelled: unknown = null;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`data: {"response":"Hel"}\n\n`));
      },
      cancel(reason) {
        cancelled = reason ?? "cancelled";
      },
    });
    const { binding } = standIn(stalled);
    const model = routeChatModel({ ...route, timeoutMs: 300 }, { AI: binding }, 5_000, workerKeys({}));
    const failed = await model
      .complete({ messages: hi, onTextDelta: () => {}, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect([(failed as ModelError).code, cancelled !== null]).toEqual(["model_timeout", true]);
  });

  it("treats an error event in a binding stream as a broken answer, not its end", async () => {
    const { binding } = standIn(
      events({ response: "Hel" }, { error: "3040: Capacity temporarily exceeded" }, "[DONE]"),
    );
    const failed = await modelOf(binding)
      .complete({ messages: hi, onTextDelta: () => {}, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect((failed as ModelError).code).toBe("model_bad_response");
  });

  it("treats an error object in place of an answer as a bad response, not an empty answer", async () => {
    const { binding } = standIn({ success: false, errors: [{ code: 5006, message: "bad input" }] });
    const failed = await modelOf(binding)
      .complete({ messages: hi, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect((failed as ModelError).code).toBe("model_unavailable");
  });

  for (const [thrown, code] of [
    ["3040: Capacity temporarily exceeded, please try again.", "model_rate_limited"],
    ["3036: You have used up your daily free allocation of 10,000 neurons.", "model_rate_limited"],
    ["5007: No such model @cf/none or task", "model_not_found"],
    ["3007: Request timeout", "model_timeout"],
    ["3043: Internal server error", "model_unavailable"],
  ] as const) {
    it(`answers a binding that throws '${thrown.slice(0, 30)}...' with ${code}`, async () => {
      const { binding } = standIn(new Error(thrown));
      const failed = await modelOf(binding)
        .complete({ messages: hi, maxRetries: 0 })
        .catch((e: unknown) => e);
      expect((failed as ModelError).code).toBe(code);
    });
  }
});

describe("Workers AI for the passthrough", () => {
  async function setUp(...outputs: unknown[]) {
    const { binding, runs } = standIn(...outputs);
    const name = await putRoute({ provider: "workers_ai", model: MODEL });
    const { key } = await newChatKey();
    const via = workerWith({ AI: binding as unknown as Ai });
    const client = new OpenAI({ apiKey: key, baseURL: BASE_URL, fetch: via.fetch, maxRetries: 0 });
    return { client, name, runs, key, via };
  }

  it("answers a route on Workers AI as an OpenAI chat.completion", async () => {
    const { client, name, runs } = await setUp({ response: "Edge answer.", usage: USAGE });
    const completion = await client.chat.completions.create({ model: name, messages: hi, max_tokens: 50 });
    expect([completion.object, completion.choices[0]?.message.content, completion.usage?.total_tokens]).toEqual([
      "chat.completion",
      "Edge answer.",
      13,
    ]);
    expect(runs[0]?.inputs).toEqual({ messages: hi, stream: false, max_tokens: 50 });
  });

  it("streams a route on Workers AI as chat.completion.chunk events, with usage when asked for", async () => {
    const { client, name } = await setUp(
      events({ response: "Edge " }, { response: "stream." }, { response: "", usage: USAGE }, "[DONE]"),
    );
    const stream = await client.chat.completions.create({
      model: name,
      messages: hi,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let total: number | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      total = chunk.usage?.total_tokens ?? total;
    }
    expect([text, total]).toEqual(["Edge stream.", 13]);
  });

  it("passes the tool calls of a route on Workers AI on in OpenAI's shape", async () => {
    const { client, name } = await setUp({
      response: "",
      tool_calls: [{ name: "get_weather", arguments: { city: "Rome" } }],
    });
    const completion = await client.chat.completions.create({ model: name, messages: hi });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect([completion.choices[0]?.finish_reason, call?.type === "function" ? call.function : null]).toEqual([
      "tool_calls",
      { name: "get_weather", arguments: '{"city":"Rome"}' },
    ]);
  });

  it("answers a binding's capacity error 429, naming Workers AI", async () => {
    const { key, name, via } = await setUp(new Error("3040: Capacity temporarily exceeded, please try again."));
    const response = await via.fetch(`${BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: name, messages: hi }),
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error.code, response.headers.get("x-aptix-route")]).toEqual([
      429,
      "workers_ai_429",
      name,
    ]);
  });

  it("answers a binding that has no such model with OpenAI's code model_not_found", async () => {
    const { key, name, via } = await setUp(new Error("5007: No such model @cf/none or task"));
    const response = await via.fetch(`${BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: name, messages: hi }),
    });
    const body = (await response.json()) as { error: { code: string } };
    expect([response.status, body.error.code]).toEqual([400, "model_not_found"]);
  });

  it("makes `default` Workers AI on a deployment with the AI binding and no LLM_BASE_URL, and meters that model", async () => {
    const { binding, runs } = standIn({ response: "Default on the edge.", usage: USAGE });
    const { key, keyId } = await newChatKey();
    const via = workerWith({ LLM_BASE_URL: "", WORKERS_AI_MODEL: MODEL, AI: binding as unknown as Ai });
    const client = new OpenAI({ apiKey: key, baseURL: BASE_URL, fetch: via.fetch, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "anything", messages: hi });
    expect([completion.choices[0]?.message.content, runs[0]?.model]).toEqual(["Default on the edge.", MODEL]);
    await via.settled();
    const row = await env.DB.prepare("SELECT route, model FROM usage_records WHERE key_id = ?").bind(keyId).first();
    expect(row).toEqual({ route: "default", model: MODEL });
  });

  it("never answers a streamed error event with a whole 200 stream: the client's stream ends in an error", async () => {
    const { client, name } = await setUp(events({ response: "Hel" }, { error: "3040: Capacity temporarily exceeded" }));
    const stream = await client.chat.completions.create({ model: name, messages: hi, stream: true });
    const read = async () => {
      for await (const _chunk of stream) {
        // Reading to the end, which must fail.
      }
    };
    await expect(read()).rejects.toThrow();
  });
});

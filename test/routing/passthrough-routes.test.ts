// The passthrough on model routes: a `model` that names a route goes to that route's upstream with its model and
// key (only `model` rewritten), any other goes to `default` byte for byte; a route that fails before its first byte
// (busy, broken, its key refused, its model unknown upstream) hands the request to its fallback; every answer names its route in a header; a failure names the routes.
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { BASE_URL, newChatKey, worker, workerWith } from "../passthrough/harness";
import { openAIContextLengthExceeded, openAIModelNotFound, type ScriptStep } from "../upstream/script-types";
import { toUpstreamA, toUpstreamB } from "./fixtures";

const unavailable: ScriptStep = { type: "error", status: 503, body: { error: { message: "overloaded" } } };
const answer = (content: string): ScriptStep => ({ type: "completion", content });

async function post(key: string, body: Record<string, unknown>, via = worker) {
  return via.fetch(`${BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** One script on each upstream, and a message carrying both markers. */
async function scripts(stepsA: ScriptStep[], stepsB: ScriptStep[]) {
  const [a, b] = await Promise.all([scriptUpstream(stepsA), scriptUpstream(stepsB, env.TEST_UPSTREAM_B_URL)]);
  return { a, b, messages: [{ role: "user", content: `hi ${a.marker} ${b.marker}` }] };
}

describe("the passthrough on model routes", () => {
  it("sends a model that names a route to its upstream with its model and key, and names the route", async () => {
    const route = await toUpstreamB({ model: "model-b" });
    const { key } = await newChatKey();
    const { b, messages } = await scripts([], [answer("from B")]);
    const response = await post(key, { model: route, messages, temperature: 0.2 });
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, route]);
    const [sent] = await b.requests();
    expect(sent?.headers.authorization).toBe("Bearer sk-test-upstream-b-key");
    expect(JSON.parse(sent?.body ?? "{}")).toEqual({ model: "model-b", messages, temperature: 0.2 });
  });

  it("forwards any other model to `default` byte for byte, naming `default`", async () => {
    const { key } = await newChatKey();
    const { a } = await scripts([answer("from A")], []);
    const bytes = `{"model":"scripted-model",  "messages":[{"role":"user","content":"${a.marker}"}]}`;
    const response = await worker.fetch(`${BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: bytes,
    });
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, "default"]);
    expect((await a.requests())[0]?.body).toBe(bytes);
  });

  it("fails over to the fallback when the route answers 503 before its first byte: one answer, both routes named", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { key } = await newChatKey();
    const { messages } = await scripts([unavailable], [answer("from B")]);
    const response = await post(key, { model: route, messages });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect([response.status, body.choices[0]?.message.content]).toEqual([200, "from B"]);
    expect([response.headers.get("x-aptix-route"), response.headers.get("x-aptix-route-failed")]).toEqual([
      fallback,
      route,
    ]);
  });

  it("fails over to the fallback when the route is rate limited (429)", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { key } = await newChatKey();
    const limited: ScriptStep = { type: "error", status: 429, body: { error: { message: "slow down" } } };
    const { messages } = await scripts([limited], [answer("from B")]);
    const response = await post(key, { model: route, messages });
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, fallback]);
  });

  it("fails over when the route's upstream does not have its model (404 model_not_found)", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ model: "gpt-none", fallbacks: [fallback] });
    const { key } = await newChatKey();
    const missing: ScriptStep = { type: "error", status: 404, body: openAIModelNotFound("gpt-none") };
    const { messages } = await scripts([missing], [answer("from B")]);
    const response = await post(key, { model: route, messages });
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, fallback]);
  });

  it("keeps to the route whose upstream refuses the request itself (400 context_length_exceeded), relaying it", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { key } = await newChatKey();
    const tooLong: ScriptStep = { type: "error", status: 400, body: openAIContextLengthExceeded(8192, 9100) };
    const { b, messages } = await scripts([tooLong], [answer("unused")]);
    const response = await post(key, { model: route, messages });
    const body = (await response.json()) as { error: { code: string } };
    expect([response.status, body.error.code, response.headers.get("x-aptix-route")]).toEqual([
      400,
      "context_length_exceeded",
      route,
    ]);
    expect(await b.requests()).toEqual([]);
  });

  it("fails over a streamed request before its first byte: the openai client reads one stream", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ baseUrl: "http://127.0.0.1:9/v1", fallbacks: [fallback] });
    const { key } = await newChatKey();
    const { messages } = await scripts([], [answer("streamed from B")]);
    const client = new OpenAI({ apiKey: key, baseURL: BASE_URL, fetch: worker.fetch, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: route,
      stream: true,
      messages: messages as OpenAI.ChatCompletionMessageParam[],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("streamed from B");
  });

  it("fails over when the route sends no first byte within its own timeout", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ timeoutMs: 300, fallbacks: [fallback] });
    const { key } = await newChatKey();
    const { messages } = await scripts([{ type: "hang" }], [answer("from B")]);
    const response = await post(key, { model: route, messages });
    expect([response.status, response.headers.get("x-aptix-route")]).toEqual([200, fallback]);
  });

  it("ends a stream that breaks after its first byte with an error frame naming the route, never a silent 200", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { key } = await newChatKey();
    const chunk = {
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: { content: "Hal" }, finish_reason: null }],
    };
    const { b, messages } = await scripts(
      [{ type: "sse", events: [`data: ${JSON.stringify(chunk)}`], eventDelayMs: 50, end: "destroy" }],
      [answer("unused")],
    );
    const response = await post(key, { model: route, messages, stream: true });
    const frames = (await response.text()).split("\n\n").filter((f) => f.startsWith("data: "));
    const last = JSON.parse(frames.at(-1)?.slice(6) ?? "{}") as { error?: { code: string; message: string } };
    expect(last.error).toMatchObject({
      code: "upstream_stream_failed",
      message: `The upstream LLM stream failed before it ended (model route '${route}').`,
    });
    expect(await b.requests()).toEqual([]);
  });

  it("answers the last route's error when every route fails, naming the one that failed before it", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { key } = await newChatKey();
    const { messages } = await scripts([unavailable], [unavailable]);
    const response = await post(key, { model: route, messages });
    expect(response.status).toBe(503);
    expect([response.headers.get("x-aptix-route"), response.headers.get("x-aptix-route-failed")]).toEqual([
      fallback,
      route,
    ]);
  });

  it("names the routes in a 502 when none can be reached", async () => {
    const fallback = await toUpstreamB({ baseUrl: "http://127.0.0.1:9/v1" });
    const route = await toUpstreamA({ baseUrl: "http://127.0.0.1:9/v1", fallbacks: [fallback] });
    const { key } = await newChatKey();
    const response = await post(key, { model: route, messages: [{ role: "user", content: "hi" }] });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error]).toEqual([
      502,
      {
        code: "upstream_unreachable",
        message: `The upstream LLM could not be reached (model route '${fallback}'; '${route}' failed before it).`,
        type: "upstream_error",
        param: null,
      },
    ]);
  });

  it("records the route and the model sent upstream in the usage row", async () => {
    const route = await toUpstreamB({ model: "model-b" });
    const { key, keyId } = await newChatKey();
    const { messages } = await scripts([], [answer("counted")]);
    const via = workerWith();
    await (await post(key, { model: route, messages }, via)).json();
    await via.settled();
    const row = await env.DB.prepare("SELECT route, model, total_tokens FROM usage_records WHERE key_id = ?")
      .bind(keyId)
      .first();
    expect(row).toEqual({ route, model: "model-b", total_tokens: 18 });
  });

  it("skips a route whose circuit opened after three failures in a row, going straight to the fallback", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { key } = await newChatKey();
    const { a, messages } = await scripts(
      [unavailable, unavailable, unavailable],
      [answer("1"), answer("2"), answer("3"), answer("4")],
    );
    const routed: (string | null)[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await post(key, { model: route, messages });
      await response.arrayBuffer();
      routed.push(response.headers.get("x-aptix-route-failed"));
    }
    expect(routed).toEqual([route, route, route, null]);
    expect(await a.requests()).toHaveLength(3);
  });
});

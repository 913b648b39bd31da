// The agent loop on model routes, through the real session object: a mode's calls take its route (that route's
// upstream, model and key); a route that fails before its first byte (an error status, no connection, no answer
// in time, its model unknown to its upstream) hands the call to its fallback in the fallback's tool format; the
// client sees one answer.
import { env, exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { RESTARTED_NOTE } from "../../src/session/door-answer";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { openAIContextLengthExceeded, openAIModelNotFound, type ScriptStep } from "../upstream/script-types";
import { modeOnRoute, systemPromptOf, toUpstreamA, toUpstreamB } from "./fixtures";

const B_KEY = "Bearer sk-test-upstream-b-key";
const unavailable = { type: "error", status: 503, body: { error: { message: "overloaded" } } } as const;

/** A session in a mode on `route`, and one script on each upstream. */
async function routedTurn(
  route: string,
  stepsA: Parameters<typeof scriptUpstream>[0],
  stepsB: Parameters<typeof scriptUpstream>[0],
) {
  const [a, b] = await Promise.all([scriptUpstream(stepsA), scriptUpstream(stepsB, env.TEST_UPSTREAM_B_URL)]);
  const sessionId = await createSession(await modeOnRoute(route));
  const response = await sendMessage(sessionId, `hello ${a.marker} ${b.marker}`);
  return { response, a, b, sessionId };
}

/** The frames of a turn sent over SSE, as [type, frame] pairs. */
async function streamedTurn(sessionId: string, content: string): Promise<Record<string, unknown>[]> {
  const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ content }),
  });
  return (await response.text())
    .split("\n\n")
    .filter(Boolean)
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "{}") as Record<string, unknown>);
}

const partialChunk = (text: string) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "model-a", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}`;

describe("the loop on model routes", () => {
  it("sends a mode's calls to its own route: that upstream, its model and its key", async () => {
    const route = await toUpstreamB({ model: "strong-model" });
    const { response, a, b } = await routedTurn(route, [], [{ type: "completion", content: "from B" }]);
    expect([response.status, response.text]).toEqual(["completed", "from B"]);
    const [request] = await b.requests();
    expect([request?.headers.authorization, JSON.parse(request?.body ?? "{}").model]).toEqual([B_KEY, "strong-model"]);
    expect(await a.requests()).toEqual([]);
  });

  it("fails over to the fallback when the route answers 503 before its first byte, without retrying it in place", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { response, a, b } = await routedTurn(route, [unavailable], [{ type: "completion", content: "from B" }]);
    expect([response.status, response.text]).toEqual(["completed", "from B"]);
    expect([(await a.requests()).length, (await b.requests()).length]).toEqual([1, 1]);
  });

  it("fails over when the route is rate limited (429)", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const limited = { type: "error", status: 429, body: { error: { message: "slow down" } } } as const;
    const { response } = await routedTurn(route, [limited], [{ type: "completion", content: "from B" }]);
    expect(response.text).toBe("from B");
  });

  it("fails over when the route cannot be reached", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ baseUrl: "http://127.0.0.1:9/v1", fallbacks: [fallback] });
    const { response } = await routedTurn(route, [], [{ type: "completion", content: "from B" }]);
    expect(response.text).toBe("from B");
  });

  it("fails over when the route sends nothing within its timeout", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ timeoutMs: 300, fallbacks: [fallback] });
    const { response, a } = await routedTurn(route, [{ type: "hang" }], [{ type: "completion", content: "from B" }]);
    expect(response.text).toBe("from B");
    expect((await a.requests())[0]?.disconnected).toBe(true);
  });

  it("keeps to the route that fails with a request the upstream refused (400): no failover, the turn fails", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const refused = { type: "error", status: 400, body: openAIContextLengthExceeded(8192, 9000) } as const;
    const { response, b } = await routedTurn(route, [refused], [{ type: "completion", content: "unused" }]);
    expect([response.status, response.error?.code]).toEqual(["failed", "context_length_exceeded"]);
    expect(await b.requests()).toEqual([]);
  });

  it("fails over from a route whose model the upstream does not have (404 model_not_found)", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const missing = { type: "error", status: 404, body: openAIModelNotFound("gpt-none") } as const;
    const { response } = await routedTurn(route, [missing], [{ type: "completion", content: "from B" }]);
    expect([response.status, response.text]).toEqual(["completed", "from B"]);
  });

  it("fails over from a native route to a JSON-format one with the request in the JSON format", async () => {
    const fallback = await toUpstreamB({ toolFormat: "json" });
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { a, b } = await routedTurn(route, [unavailable], [{ type: "completion", content: "from B" }]);
    const [sentA] = await a.bodies();
    const [sentB] = await b.bodies();
    expect([Array.isArray(sentA?.tools), sentB?.tools]).toEqual([true, undefined]);
    expect(
      [systemPromptOf(sentA ?? {}), systemPromptOf(sentB ?? {})].map((p) => p.includes("## Tool call format")),
    ).toEqual([false, true]);
  });

  it("fails over from a JSON-format route to a native one, which is offered the tools and reads its native calls", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ toolFormat: "json", fallbacks: [fallback] });
    const { response, b } = await routedTurn(
      route,
      [unavailable],
      [
        { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
        { type: "completion", content: "Greeted." },
      ],
    );
    expect([response.status, response.text, response.toolCalls.map((c) => c.name)]).toEqual([
      "completed",
      "Greeted.",
      ["agent_hello_world"],
    ]);
    const [first] = await b.bodies();
    const offered = (first?.tools ?? []) as { function: { name: string } }[];
    expect(offered.map((t) => t.function.name)).toContain("agent_hello_world");
  });

  it("writes a native step's tool call and result in the JSON format for a JSON-format fallback later in the turn", async () => {
    const fallback = await toUpstreamB({ toolFormat: "json" });
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { response, b } = await routedTurn(
      route,
      [
        { type: "completion", toolCalls: [{ id: "call_1", name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
        unavailable,
      ],
      [{ type: "completion", content: "Done greeting." }],
    );
    expect(response.text).toBe("Done greeting.");
    const messages = (await b.messagesOf(0)).slice(1);
    expect(messages.slice(-2)).toEqual([
      { role: "assistant", content: '{"tool":"agent_hello_world","parameters":{"name":"Dana"},"terminate":false}' },
      { role: "user", content: expect.stringMatching(/^Result of tool agent_hello_world \(call call_1\):\n/) },
    ]);
  });

  it("walks the chain past a fallback that fails too, to the fallback's own fallback", async () => {
    const last = await toUpstreamB();
    const middle = await toUpstreamA({ fallbacks: [last] });
    const route = await toUpstreamA({ fallbacks: [middle] });
    const { response, a } = await routedTurn(
      route,
      [unavailable, unavailable],
      [{ type: "completion", content: "from B" }],
    );
    expect(response.text).toBe("from B");
    expect((await a.bodies()).map((body) => body.model)).toEqual(["model-a", "model-a"]);
  });

  it("ends the turn with the last route's cause when every route of the chain fails", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const { response } = await routedTurn(route, [unavailable], [unavailable, unavailable, unavailable]);
    expect([response.status, response.error?.code]).toEqual(["failed", "model_unavailable"]);
  });

  it("starts a step whose stream broke after its first byte again on the fallback, telling clients to drop its text", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const [a, b] = await Promise.all([
      scriptUpstream([{ type: "sse", events: [partialChunk("Partial answ")], eventDelayMs: 100, end: "destroy" }]),
      scriptUpstream([{ type: "completion", content: "Whole answer." }], env.TEST_UPSTREAM_B_URL),
    ]);
    const sessionId = await createSession(await modeOnRoute(route));
    const frames = await streamedTurn(sessionId, `hi ${a.marker} ${b.marker}`);
    const restart = frames.find((f) => f.type === "assistant_restarted");
    expect(restart).toMatchObject({ discardedChars: "Partial answ".length, failedRoute: route, route: fallback });
    // What a client keeps: every delta, minus what the restart drops.
    let text = "";
    for (const frame of frames) {
      if (frame.type === "assistant_delta") text += String(frame.text);
      if (frame.type === "assistant_restarted") text = text.slice(0, -Number(frame.discardedChars));
    }
    const completed = frames.find((f) => f.type === "turn_completed") as { response: { text: string } } | undefined;
    expect([text, completed?.response.text]).toEqual(["Whole answer.", "Whole answer."]);
  });

  it("starts a step again only once: a second broken stream ends the turn", async () => {
    const last = await toUpstreamB();
    const middle = await toUpstreamA({ fallbacks: [last] });
    const route = await toUpstreamA({ fallbacks: [middle] });
    const broken: ScriptStep = { type: "sse", events: [partialChunk("Half")], eventDelayMs: 100, end: "destroy" };
    const [a, b] = await Promise.all([
      scriptUpstream([broken, broken]),
      scriptUpstream([{ type: "completion", content: "unused" }], env.TEST_UPSTREAM_B_URL),
    ]);
    const sessionId = await createSession(await modeOnRoute(route));
    const frames = await streamedTurn(sessionId, `hi ${a.marker} ${b.marker}`);
    expect(frames.filter((f) => f.type === "assistant_restarted")).toHaveLength(1);
    const completed = frames.find((f) => f.type === "turn_completed") as { response: { status: string } } | undefined;
    expect(completed?.response.status).toBe("failed");
    expect(await b.requests()).toEqual([]);
  });

  it("tells an /agent/v1 stream in words that the answer starts again, since OpenAI's stream cannot take text back", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const [a, b] = await Promise.all([
      scriptUpstream([{ type: "sse", events: [partialChunk("Partial answ")], eventDelayMs: 100, end: "destroy" }]),
      scriptUpstream([{ type: "completion", content: "Whole answer." }], env.TEST_UPSTREAM_B_URL),
    ]);
    const mode = await modeOnRoute(route);
    const client = new OpenAI({
      apiKey: TEST_KEYS.chat.key,
      baseURL: "http://aptix.test/agent/v1",
      fetch: (input, init) => exports.default.fetch(input, init),
      maxRetries: 0,
    });
    const stream = await client.chat.completions.create({
      model: `aptix-agent/${mode}`,
      stream: true,
      messages: [{ role: "user", content: `hi ${a.marker} ${b.marker}` }],
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(`Partial answ\n\n${RESTARTED_NOTE}\n\nWhole answer.`);
  });
});

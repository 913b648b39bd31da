// One agent turn as a trace, received by a real OTLP/HTTP receiver (test/observability/global-setup.ts): a turn
// whose first model call fails over from route A to route B, that runs a server tool, an MCP tool (the reference
// server behind a proxy that records the trace context it is sent), and a client tool (the turn pauses; the client's
// result brings a second run of the same turn). The client sends a W3C traceparent with both requests.
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { TurnTimeline } from "../../src/wire/timeline";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { scriptUpstream, type UpstreamScript } from "../fixtures/upstream";
import { registerServer, toolOf } from "../mcp/fixtures";
import { modeOnRoute, toUpstreamA, toUpstreamB } from "../routing/fixtures";
import { SPAN_KIND, type SpanRecord } from "./span-record";
import { childrenOf, newTrace, spanNamed, spansOfTrace } from "./spans";

const unavailable = { type: "error", status: 503, body: { error: { message: "overloaded" } } } as const;

async function post(path: string, body: unknown, traceparent: string): Promise<AgentExecuteResponse> {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method: "POST",
    headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", traceparent },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as AgentExecuteResponse;
}

interface TracedCall {
  tool: string;
  header: string | null;
  meta: string | null;
}

interface Turn {
  trace: ReturnType<typeof newTrace>;
  secondParentId: string;
  sessionId: string;
  mcpTool: string;
  spans: SpanRecord[];
  a: UpstreamScript;
  b: UpstreamScript;
  mcpCalls: TracedCall[];
}

/** The turn, run once for the whole file: its spans and what the upstreams and the MCP server were sent. */
async function runTurn(): Promise<Turn> {
  const server = await registerServer({ url: `${env.TEST_MCP_CONTROL_URL}/traced/mcp` });
  const mcpTool = toolOf(server, "echo");
  const fallback = await toUpstreamB();
  const route = await toUpstreamA({ fallbacks: [fallback] });
  const mode = await modeOnRoute(route, ["agent_hello_world", "workspace_read_file", `mcp:${server}`]);
  const call = (name: string, args: unknown) => ({ name, arguments: JSON.stringify(args) });
  // Each answer reports usage of its own, so the spans' tokens can be told apart.
  const usage = (prompt: number, completion: number) => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  });
  const [a, b] = await Promise.all([
    scriptUpstream([
      unavailable,
      { type: "completion", toolCalls: [call(mcpTool, { message: "traced" })], usage: usage(102, 12) },
      { type: "completion", toolCalls: [call("workspace_read_file", { path: "README.md" })], usage: usage(103, 13) },
      { type: "completion", content: "All done.", usage: usage(104, 14) },
    ]),
    scriptUpstream(
      [{ type: "completion", toolCalls: [call("agent_hello_world", { name: "trace" })], usage: usage(101, 11) }],
      env.TEST_UPSTREAM_B_URL,
    ),
  ]);
  const sessionId = await createSession(mode);
  const trace = newTrace();
  const paused = await post(
    `/context/sessions/${sessionId}/messages`,
    { content: `work ${a.marker} ${b.marker}` },
    trace.traceparent,
  );
  expect(paused.status).toBe("awaiting_client");
  const readCall = paused.toolCalls.find((c) => c.name === "workspace_read_file");
  const secondParentId = newTrace().parentId;
  const done = await post(
    `/context/sessions/${sessionId}/tool-results`,
    { results: [{ toolCallId: readCall?.id, resultJson: JSON.stringify({ path: "README.md", content: "# hi" }) }] },
    `00-${trace.traceId}-${secondParentId}-01`,
  );
  expect(done.status).toBe("completed");
  const spans = await spansOfTrace(trace.traceId, {
    until: (s) => s.filter((x) => x.name.startsWith("invoke_agent")).length === 2 && s.some((x) => x.kind === 2),
  });
  const mcpCalls = (await (await fetch(`${env.TEST_MCP_CONTROL_URL}/traced/calls`)).json()) as TracedCall[];
  return { trace, secondParentId, sessionId, mcpTool, spans, a, b, mcpCalls };
}

let turn: Turn;
beforeAll(async () => {
  turn = await runTurn();
}, 30_000);

const runs = () => turn.spans.filter((s) => s.name.startsWith("invoke_agent ")).sort((x, y) => x.startMs - y.startMs);
const serverSpanFor = (parentId: string) =>
  turn.spans.find((s) => s.kind === SPAN_KIND.server && s.parentSpanId === parentId);

describe("an agent turn's trace", () => {
  it("continues the client's traceparent with the request's server span", () => {
    const server = serverSpanFor(turn.trace.parentId);
    expect(server?.name).toBe("POST /context/sessions/:sessionId/messages");
    expect(server?.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/context/sessions/:sessionId/messages",
      "http.response.status_code": 200,
      "aptix.key.id": "chat",
      "aptix.org": TEST_KEYS.chat.org,
    });
  });

  it("never puts the API key on a span", () => {
    expect(JSON.stringify(turn.spans)).not.toContain(TEST_KEYS.chat.key);
  });

  it("runs the turn in the session object as invoke_agent, a child of the request that drove it", () => {
    const [first, second] = runs();
    expect(first?.parentSpanId).toBe(serverSpanFor(turn.trace.parentId)?.spanId);
    expect(second?.parentSpanId).toBe(serverSpanFor(turn.secondParentId)?.spanId);
    expect(first?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": turn.sessionId,
      "aptix.turn.run": "start",
      "aptix.turn.outcome": "awaiting_client",
      "aptix.turn.iterations": 3,
      // The version of the mode the run read: a mode written once is at 1 (docs/modes.md, Versions).
      "aptix.mode.version": 1,
    });
    expect(second?.attributes).toMatchObject({
      "aptix.turn.run": "resume_pause",
      "aptix.turn.outcome": "completed",
      "aptix.turn.id": first?.attributes["aptix.turn.id"],
    });
    expect(String(first?.attributes["gen_ai.agent.name"])).toMatch(/^routed/);
  });

  it("makes each model call a chat span under its run, four in all", () => {
    const [first, second] = runs();
    const chats = (run: SpanRecord | undefined) =>
      run ? childrenOf(turn.spans, run).filter((s) => s.name.startsWith("chat ")) : [];
    expect([chats(first).length, chats(second).length]).toEqual([3, 1]);
    for (const chat of [...chats(first), ...chats(second)]) {
      expect(chat.kind).toBe(SPAN_KIND.client);
      expect(chat.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai" });
    }
  });

  it("records the failover as an event of the model call that the fallback answered", () => {
    const failed = turn.spans.find((s) => s.events.some((e) => e.name === "aptix.model_route.failover"));
    expect(failed?.attributes).toMatchObject({
      "gen_ai.request.model": "model-a",
      "gen_ai.response.model": "model-b",
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });
    const event = failed?.events.find((e) => e.name === "aptix.model_route.failover");
    expect(event?.attributes).toMatchObject({ reason: "model_unavailable" });
    expect(typeof failed?.attributes["gen_ai.response.time_to_first_chunk"]).toBe("number");
  });

  it("gives each model call the tokens of its usage row", async () => {
    const rows = await okUsageRows(turn.sessionId, 4);
    const chats = turn.spans.filter((s) => s.name.startsWith("chat ")).sort((x, y) => x.startMs - y.startMs);
    expect(
      chats.map((s) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]),
    ).toEqual(rows.map((r) => [r.prompt_tokens, r.completion_tokens]));
  });

  it("runs the server tool as execute_tool, ran on the server", () => {
    const tool = spanNamed(turn.spans, "execute_tool agent_hello_world");
    expect(tool.parentSpanId).toBe(runs()[0]?.spanId);
    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "agent_hello_world",
      "gen_ai.tool.type": "extension",
      "aptix.tool.ran_on": "server",
    });
    expect(typeof tool.attributes["gen_ai.tool.call.id"]).toBe("string");
  });

  it("runs the MCP tool as execute_tool with a tools/call client span under it", () => {
    const tool = spanNamed(turn.spans, `execute_tool ${turn.mcpTool}`);
    expect(tool.attributes).toMatchObject({ "aptix.tool.ran_on": "mcp" });
    const [wire] = childrenOf(turn.spans, tool);
    expect(wire?.name).toBe("tools/call echo");
    expect(wire?.kind).toBe(SPAN_KIND.client);
    expect(wire?.attributes).toMatchObject({ "mcp.method.name": "tools/call", "server.address": "127.0.0.1" });
  });

  it("runs the client tool as execute_tool, ran on the client, in the run its result brought, with the wait", () => {
    const second = runs()[1];
    const clientCall = turn.spans.find(
      (s) => s.name === "execute_tool workspace_read_file" && s.attributes["aptix.tool.ran_on"] === "client",
    );
    expect(clientCall?.parentSpanId).toBe(second?.spanId);
    expect(clientCall?.attributes).toMatchObject({ "gen_ai.tool.type": "function" });
    const wait = second?.events.find((e) => e.name === "aptix.wait");
    expect(wait?.attributes).toMatchObject({ kind: "client" });
    expect(Number(wait?.attributes.duration_ms)).toBeGreaterThanOrEqual(0);
  });

  it("sends each model call's traceparent upstream: the upstream sees the chat span's id", async () => {
    const chats = new Set(turn.spans.filter((s) => s.name.startsWith("chat ")).map((s) => s.spanId));
    const sent = [...(await turn.a.requests()), ...(await turn.b.requests())].map((r) => r.headers.traceparent ?? "");
    expect(sent).toHaveLength(5);
    for (const traceparent of sent) {
      const [, traceId, spanId] = traceparent.split("-");
      expect(traceId).toBe(turn.trace.traceId);
      expect(chats.has(spanId ?? "")).toBe(true);
    }
  });

  it("sends the MCP call's traceparent to the MCP server, in the HTTP header and in params._meta", () => {
    const wire = spanNamed(turn.spans, "tools/call echo");
    const expected = `00-${turn.trace.traceId}-${wire.spanId}-01`;
    const seen = turn.mcpCalls.filter((c) => c.header?.includes(turn.trace.traceId));
    expect(seen).toEqual([{ tool: "echo", header: expected, meta: expected }]);
  });

  it("records no content without the opt-in", () => {
    const content = turn.spans.flatMap((s) =>
      Object.keys(s.attributes).filter((k) => k === "gen_ai.input.messages" || k === "gen_ai.tool.call.arguments"),
    );
    expect(content).toEqual([]);
  });

  it("records the same turn in its timeline, whose steps name the exported spans", async () => {
    const turnId = String(runs()[0]?.attributes["aptix.turn.id"]);
    const response = await exports.default.fetch(
      `http://aptix.test/context/sessions/${turn.sessionId}/turns/${turnId}/timeline`,
      { headers: authHeaders(TEST_KEYS.chat.key) },
    );
    const timeline = TurnTimeline.parse(await response.json());
    expect(timeline.traceIds).toEqual([turn.trace.traceId]);
    const spanOf = new Map(turn.spans.map((s) => [s.spanId, s]));
    const named = timeline.steps
      .filter((step) => step.kind !== "failover" && step.kind !== "wait")
      .map((step) => [step.kind, spanOf.get(step.spanId ?? "")?.name]);
    expect(named).toEqual([
      ["run", runs()[0]?.name],
      ["model_call", "chat model-a"],
      ["tool_call", "execute_tool agent_hello_world"],
      ["model_call", "chat model-a"],
      ["tool_call", `execute_tool ${turn.mcpTool}`],
      ["model_call", "chat model-a"],
      ["tool_call", "execute_tool workspace_read_file"],
      // The client's call started when the turn paused for it, before the run its result brought.
      ["tool_call", "execute_tool workspace_read_file"],
      ["run", runs()[1]?.name],
      ["model_call", "chat model-a"],
    ]);
  });

  it("exports with the configured headers and service name", () => {
    const server = serverSpanFor(turn.trace.parentId);
    expect(server?.resource).toMatchObject({
      "service.name": "aptix-edge-test",
      "cloud.provider": "cloudflare",
      "cloud.platform": "cloudflare.workers",
    });
    expect(server?.scope.name).toBe("aptix-edge");
  });
});

/** The session's usage rows of calls that answered, oldest first, once `count` are written (after the replies). */
async function okUsageRows(
  sessionId: string,
  count: number,
): Promise<{ prompt_tokens: number; completion_tokens: number }[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT prompt_tokens, completion_tokens FROM usage_records WHERE session_id = ? AND outcome = 'ok' ORDER BY created_at, rowid",
    )
      .bind(sessionId)
      .all<{ prompt_tokens: number; completion_tokens: number }>();
    if (results.length >= count || Date.now() > deadline) return results;
    await scheduler.wait(50);
  }
}

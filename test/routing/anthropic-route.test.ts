// The agent loop on an anthropic model route (issue 28), through the real session object and the scripted Anthropic
// upstream: the Messages request it sends (system, Anthropic-shaped tools, x-api-key, anthropic-version), native
// tool calls round trip as tool_use and tool_result blocks, streamed text reaches the session's frames, usage is
// metered, a 529 fails over to the route's fallback, a 401 is our fixed code, and a route without baseUrl is refused.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession, sendMessage } from "../fixtures/sessions";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { BASE_URL, newChatKey, worker } from "../passthrough/harness";
import type { AnthropicScriptStep } from "../upstream/script-types";
import { modeOnRoute, putRoute, toUpstreamB } from "./fixtures";

const anthropicBody = () => ({
  provider: "anthropic" as const,
  model: "claude-test",
  baseUrl: env.TEST_ANTHROPIC_URL,
  apiKeySecret: "TEST_ANTHROPIC_API_KEY",
});

/** An anthropic route to the scripted Anthropic upstream, with its key by secret. */
const toAnthropic = (body: { fallbacks?: string[]; apiKeySecret?: string; anthropicVersion?: string } = {}) =>
  putRoute({ ...anthropicBody(), ...body });

/** A session in a mode on an anthropic route, and the script its upstream answers from. */
async function anthropicSession(steps: AnthropicScriptStep[], route?: string) {
  const script = await scriptAnthropic(steps);
  const sessionId = await createSession(await modeOnRoute(route ?? (await toAnthropic())));
  return { script, sessionId };
}

/** The frames of a turn sent over SSE. */
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

interface SentBlock {
  type: string;
  tool_use_id?: string;
  content?: unknown;
  name?: string;
  input?: unknown;
}
interface SentMessage {
  role: string;
  content: string | SentBlock[];
}

describe("the loop on an anthropic route", () => {
  it("answers with the route's text, sending system, Anthropic tools, x-api-key and anthropic-version", async () => {
    const { script, sessionId } = await anthropicSession([
      { type: "message", content: [{ type: "text", text: "Hi there." }] },
    ]);
    const response = await sendMessage(sessionId, `hello ${script.marker}`);
    expect([response.status, response.text]).toEqual(["completed", "Hi there."]);
    const [request] = await script.requests();
    expect([request?.headers["x-api-key"], request?.headers["anthropic-version"]]).toEqual([
      env.TEST_ANTHROPIC_API_KEY,
      "2023-06-01",
    ]);
    const body = JSON.parse(request?.body ?? "{}") as {
      model: string;
      // Sent as one text block carrying the prompt cache's breakpoint (docs/anthropic.md, prompt caching).
      system: { type: string; text: string }[];
      max_tokens: number;
      messages: SentMessage[];
      tools: { name: string; input_schema: { type: string } }[];
    };
    expect([body.model, typeof body.max_tokens, body.system[0]?.text.includes("Answer briefly.")]).toEqual([
      "claude-test",
      "number",
      true,
    ]);
    expect(body.messages.map((m) => m.role)).not.toContain("system");
    const hello = body.tools.find((t) => t.name === "agent_hello_world");
    expect(hello?.input_schema.type).toBe("object");
  });

  it("sends the anthropic-version the route names", async () => {
    const route = await toAnthropic({ anthropicVersion: "2024-01-01" });
    const { script, sessionId } = await anthropicSession(
      [{ type: "message", content: [{ type: "text", text: "ok" }] }],
      route,
    );
    await sendMessage(sessionId, `hello ${script.marker}`);
    const [request] = await script.requests();
    expect(request?.headers["anthropic-version"]).toBe("2024-01-01");
  });

  it("runs a native tool call: tool_use, our tool runs, its tool_result block goes back, then the final text", async () => {
    const { script, sessionId } = await anthropicSession([
      {
        type: "message",
        content: [{ type: "tool_use", id: "toolu_1", name: "agent_hello_world", input: { name: "Dana" } }],
      },
      { type: "message", content: [{ type: "text", text: "Greeted Dana." }] },
    ]);
    const response = await sendMessage(sessionId, `greet ${script.marker}`);
    expect([response.status, response.text, response.toolCalls.map((c) => c.name)]).toEqual([
      "completed",
      "Greeted Dana.",
      ["agent_hello_world"],
    ]);
    const second = (await script.bodies())[1] as { messages: SentMessage[] } | undefined;
    const [assistant, results] = (second?.messages ?? []).slice(-2);
    expect(assistant).toMatchObject({
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_1", name: "agent_hello_world", input: { name: "Dana" } }],
    });
    const result = Array.isArray(results?.content) ? results.content[0] : undefined;
    expect([results?.role, result?.type, result?.tool_use_id]).toEqual(["user", "tool_result", "toolu_1"]);
    expect(String(result?.content)).toContain("Hello, Dana!");
  });

  it("streams the route's text deltas into the session's frames", async () => {
    const { script, sessionId } = await anthropicSession([
      { type: "message", content: [{ type: "text", text: "Streamed from Anthropic." }], chunkSize: 4 },
    ]);
    const frames = await streamedTurn(sessionId, `hi ${script.marker}`);
    const deltas = frames.filter((f) => f.type === "assistant_delta").map((f) => String(f.text));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Streamed from Anthropic.");
    const [sent] = await script.bodies();
    expect(sent?.stream).toBe(true);
  });

  it("meters the route's usage: a usage row with its tokens", async () => {
    const { script, sessionId } = await anthropicSession([
      { type: "message", content: [{ type: "text", text: "Counted." }], usage: { input_tokens: 21, output_tokens: 5 } },
    ]);
    await sendMessage(sessionId, `count ${script.marker}`);
    const rows = await sessionRows(sessionId);
    expect(rows.map((r) => [r.prompt_tokens, r.completion_tokens, r.total_tokens, r.model])).toEqual([
      [21, 5, 26, "claude-test"],
    ]);
  });

  it("fails over to the route's fallback when the anthropic upstream answers 529 overloaded", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const b = await scriptUpstream([{ type: "completion", content: "from B" }], env.TEST_UPSTREAM_B_URL);
    const { script, sessionId } = await anthropicSession(
      [{ type: "error", status: 529, error: { type: "overloaded_error", message: "Overloaded" } }],
      route,
    );
    const response = await sendMessage(sessionId, `hello ${script.marker} ${b.marker}`);
    expect([response.status, response.text]).toEqual(["completed", "from B"]);
    expect([(await script.requests()).length, (await b.requests()).length]).toEqual([1, 1]);
  });

  it("ends the turn with model_auth_failed when the anthropic upstream refuses the key (401)", async () => {
    const route = await toAnthropic({ apiKeySecret: "UPSTREAM_A_KEY" });
    const { script, sessionId } = await anthropicSession(
      [{ type: "message", content: [{ type: "text", text: "never" }] }],
      route,
    );
    const response = await sendMessage(sessionId, `hello ${script.marker}`);
    expect(response.error?.code).toBe("model_auth_failed");
  });
});

describe("anthropic routes in the admin API", () => {
  it("refuses an anthropic route without baseUrl, naming baseUrl", async () => {
    const { status, json } = await call(
      "PUT",
      "/admin/model-routes/claude-no-url",
      { provider: "anthropic", model: "claude-test", apiKeySecret: "TEST_ANTHROPIC_API_KEY" },
      TEST_KEYS.admin.key,
    );
    const parsed = json as { error: { param: string; code: string } };
    expect([status, parsed.error.param]).toEqual([400, "baseUrl"]);
  });

  it("refuses the json tool format on an anthropic route, naming toolFormat", async () => {
    const { status, json } = await call(
      "PUT",
      "/admin/model-routes/claude-json",
      { ...anthropicBody(), toolFormat: "json" },
      TEST_KEYS.admin.key,
    );
    expect([status, (json as { error: { param: string } }).error.param]).toEqual([400, "toolFormat"]);
  });

  it("refuses anthropicVersion on a route of another provider, naming anthropicVersion", async () => {
    const { status, json } = await call(
      "PUT",
      "/admin/model-routes/openai-versioned",
      { provider: "openai_compatible", model: "m", baseUrl: "https://llm.example/v1", anthropicVersion: "2023-06-01" },
      TEST_KEYS.admin.key,
    );
    expect([status, (json as { error: { param: string } }).error.param]).toEqual([400, "anthropicVersion"]);
  });

  it("stores an anthropic route with the default anthropic-version", async () => {
    const name = await toAnthropic();
    const { json } = await call("GET", `/admin/model-routes/${name}`, undefined, TEST_KEYS.admin.key);
    const { route } = json as { route: { provider: string; anthropicVersion: string | null; toolFormat: string } };
    expect([route.provider, route.anthropicVersion, route.toolFormat]).toEqual(["anthropic", "2023-06-01", "native"]);
  });
});

interface UsageRow {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  model: string;
}

/** A session's usage rows once one is written: the object writes them in a batch after its reply. */
async function sessionRows(sessionId: string): Promise<UsageRow[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT prompt_tokens, completion_tokens, total_tokens, model FROM usage_records WHERE session_id = ?",
    )
      .bind(sessionId)
      .all<UsageRow>();
    if (results.length > 0 || Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("anthropic routes in the chat completions passthrough", () => {
  /** A chat completions request for `route` whose message carries the markers. */
  const chat = async (route: string, markers: string) => {
    const { key } = await newChatKey();
    return worker.fetch(`${BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: route, messages: [{ role: "user", content: `hi ${markers}` }] }),
    });
  };

  it("serves a chat completions request on an anthropic route, translated to the Messages API and back", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "from Claude" }] }]);
    const response = await chat(route, script.marker);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect([response.status, response.headers.get("x-aptix-route"), body.choices[0]?.message.content]).toEqual([
      200,
      route,
      "from Claude",
    ]);
    const [sent] = await script.requests();
    expect([sent?.path, JSON.parse(sent?.body ?? "{}").model]).toEqual(["/v1/messages", "claude-test"]);
  });

  it("fails over from an anthropic route answering 529 to its OpenAI-compatible fallback", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const script = await scriptAnthropic([
      { type: "error", status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
    ]);
    const b = await scriptUpstream([{ type: "completion", content: "from B" }], env.TEST_UPSTREAM_B_URL);
    const response = await chat(route, `${script.marker} ${b.marker}`);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect([response.status, response.headers.get("x-aptix-route-failed"), body.choices[0]?.message.content]).toEqual([
      200,
      route,
      "from B",
    ]);
  });
});

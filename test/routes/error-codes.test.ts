// Every error code in the one table (src/errors.ts) reaches the client with the table's status and type: each
// has a request here that provokes it. A code added to the table without a way to provoke it fails the type
// check (TRIGGERS is a Record over every code).
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createBrowserSession } from "../../src/auth/browser-sessions";
import { ERROR_CODES, type ErrorCode } from "../../src/errors";
import { anthropicErrorTypeOf } from "../../src/translate/anthropic-to-chat";
import { holdKey, keyed } from "../fixtures/idempotency";
import { beginSignIn, callback, signInAtProvider, ssoWorker } from "../fixtures/idp";
import { expirePauseNow } from "../fixtures/in-object";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { listTools } from "../fixtures/mcp-oauth";
import { createSession, sendMessage } from "../fixtures/sessions";
import { connect, openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode, registerServer, toolOf } from "../mcp/fixtures";
import { newChatKey, workerWith } from "../passthrough/harness";
import { openAIContextLengthExceeded } from "../upstream/script-types";

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;
const app: Fetch = (input, init) => exports.default.fetch(input, init);

/**
 * An HTTP request that provokes the code; or, for codes that reach a client after its answer began, the
 * socket's error frame or a stream's error event (their status is what an HTTP answer would carry).
 */
type Trigger =
  | { http: () => Promise<Response> }
  | { frame: () => Promise<{ code: string }> }
  | { event: () => Promise<{ code: string; type: string }> }
  /** A code only the Messages wire answers: Anthropic's shape, whose error type follows the status. */
  | { anthropic: () => Promise<Response> };

/** The error event that ends a streamed passthrough answer. */
async function errorEvent(response: Response): Promise<{ code: string; type: string }> {
  const text = await response.text();
  const event = text.split("\n\n").find((e) => e.includes('"error"')) ?? "";
  return (JSON.parse(event.slice("data: ".length)) as { error: { code: string; type: string } }).error;
}

function request(method: string, path: string, body?: unknown, options: { key?: string; through?: Fetch } = {}) {
  return (options.through ?? app)(`http://aptix.test${path}`, {
    method,
    headers: { ...authHeaders(options.key), "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** A turn on the agent's chat completions door whose model call the upstream refuses (`times` over, retries too). */
async function agentTurnRefused(
  error: { status: number; body: unknown },
  more: { headers?: Record<string, string> } = {},
  times = 1,
): Promise<Response> {
  const script = await scriptUpstream(
    Array.from({ length: times }, () => ({ type: "error", ...error, ...more }) as const),
  );
  return request("POST", "/agent/v1/chat/completions", {
    model: "aptix-agent/general",
    messages: [{ role: "user", content: `fail ${script.marker}` }],
  });
}

const write = { name: "workspace_write_file", arguments: JSON.stringify({ path: "a.txt", content: "A" }) };

/** A session whose turn waits for approval of one write. */
async function pausedSession(): Promise<{ id: string; callId: string }> {
  const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
  const id = await createSession("workspace");
  const paused = await sendMessage(id, `write ${script.marker}`);
  return { id, callId: paused.toolCalls[0]?.id ?? "" };
}

async function frameError(frame: unknown): Promise<{ code: string }> {
  const socket = await openSocket(await createSession());
  const from = socket.frames.length;
  socket.send(frame);
  const error = await socket.waitForType("error", from);
  socket.close();
  return { code: String(error.code) };
}

function brokenDb(): D1Database {
  const fail = () => {
    throw new Error("D1 is down");
  };
  return { prepare: fail, batch: fail, exec: fail, dump: fail, withSession: fail } as unknown as D1Database;
}

function refusingLimiter(): RateLimit {
  return { limit: async () => ({ success: false }) };
}

const TRIGGERS: Record<ErrorCode, Trigger> = {
  invalid_request: { http: () => request("PUT", "/admin/modes/x", { displayName: 7 }, { key: TEST_KEYS.admin.key }) },
  invalid_json: { http: () => request("POST", "/context/sessions", "{") },
  unknown_field: { http: () => request("POST", "/context/sessions", { colour: "blue" }) },
  unknown_mode: { http: () => request("POST", "/context/sessions", { mode: "astrology" }) },
  invalid_dataset: {
    http: () => request("POST", "/admin/evals/datasets", { name: "d", jsonl: "{" }, { key: TEST_KEYS.admin.key }),
  },
  invalid_tool_result: {
    http: async () => {
      const script = await scriptUpstream([
        { type: "completion", toolCalls: [{ name: "workspace_read_file", arguments: '{"path":"a.md"}' }] },
      ]);
      const id = await createSession("workspace");
      const paused = await sendMessage(id, `read ${script.marker}`);
      return request("POST", `/context/sessions/${id}/tool-results`, {
        results: [{ toolCallId: paused.toolCalls[0]?.id, resultJson: '{"nope":1}' }],
      });
    },
  },
  duplicate_tool_call_id: {
    http: async () => {
      const { id, callId } = await pausedSession();
      const decision = { toolCallId: callId, approved: true };
      return request("POST", `/context/sessions/${id}/approvals`, { decisions: [decision, decision] });
    },
  },
  invalid_workflow_parameters: {
    http: async () =>
      request("POST", `/context/sessions/${await createSession()}/workflows/draft_ddr`, { parameters: {} }),
  },
  invalid_branch_point: {
    http: async () => request("POST", `/context/sessions/${await createSession()}/branches`, { beforeMessage: 1 }),
  },
  malformed_frame: { frame: () => frameError("{not json") },
  unknown_frame_type: { frame: () => frameError({ type: "launch" }) },
  invalid_frame: { frame: () => frameError({ type: "user_message" }) },
  frame_too_large: { frame: () => frameError({ type: "ping", pad: "x".repeat(1_000_001) }) },
  attachment_not_accepted: {
    http: async () =>
      request("POST", `/context/sessions/${await createSession()}/messages`, {
        content: "what is this?",
        attachments: [{ name: "dot.png", mediaType: "image/png", data: "iVBORw0KGgo=" }],
      }),
  },
  missing_api_key: { http: () => app("http://aptix.test/modes") },
  invalid_api_key: { http: () => request("GET", "/modes", undefined, { key: "not-a-key" }) },
  api_key_expired: {
    http: async () => {
      const { key, keyId } = await newChatKey();
      await env.DB.prepare("UPDATE api_keys SET expires_at = '2020-01-01T00:00:00.000Z' WHERE id = ?")
        .bind(keyId)
        .run();
      return request("GET", "/modes", undefined, { key });
    },
  },
  sign_in_expired: {
    http: () => app("http://aptix.test/auth/me", { headers: { cookie: "__Host-aptix_session=gone" } }),
  },
  sign_in_failed: {
    http: async () => {
      const worker = ssoWorker();
      const begun = await beginSignIn(worker);
      const state = new URL(begun.authorizeUrl).searchParams.get("state") ?? "";
      const url = `https://aptix.test/auth/callback?error=access_denied&state=${state}&iss=${encodeURIComponent(env.TEST_IDP_ISSUER)}`;
      return callback(worker, url, begun.stateCookie);
    },
  },
  invalid_id_token: {
    http: async () => {
      const worker = ssoWorker();
      const begun = await beginSignIn(worker);
      const url = await signInAtProvider(begun.authorizeUrl, "bob");
      await env.DB.prepare("UPDATE sign_in_flows SET nonce = 'another-nonce'").run();
      return callback(worker, url, begun.stateCookie);
    },
  },
  invalid_sign_in_state: {
    http: async () => {
      const worker = ssoWorker();
      const begun = await beginSignIn(worker);
      return callback(worker, "https://aptix.test/auth/callback?code=c&state=other", begun.stateCookie);
    },
  },
  user_disabled: {
    http: async () => {
      const { key, org } = await newChatKey(`org-disabled-${crypto.randomUUID()}`);
      await env.DB.prepare("INSERT INTO users (org, id, disabled_at) VALUES (?, 'tester', '2026-01-01T00:00:00Z')")
        .bind(org)
        .run();
      return request("GET", "/modes", undefined, { key });
    },
  },
  csrf_token_mismatch: {
    http: async () => {
      const { secret } = await createBrowserSession(
        env.DB,
        { org: "org-a", user: "csrf-victim", scopes: ["chat"], via: "browser_session" },
        { lifetimeMs: 3_600_000, idleMs: 3_600_000 },
      );
      return app("http://aptix.test/context/sessions", {
        method: "POST",
        headers: { cookie: `__Host-aptix_session=${secret}`, "content-type": "application/json" },
        body: "{}",
      });
    },
  },
  invalid_access_token: { http: () => listTools("neither-a-key-nor-a-token") },
  invalid_access_assertion: {
    http: () =>
      workerWith({
        CF_ACCESS_TEAM_DOMAIN: env.TEST_ACCESS_TEAM,
        CF_ACCESS_AUD: "aud",
        CF_ACCESS_ORG: "acme",
      } as Partial<Cloudflare.Env>).fetch("https://aptix.test/modes", {
        headers: { "cf-access-jwt-assertion": "not.a.jwt" },
      }),
  },
  grant_not_found: { http: () => request("DELETE", "/context/grants/grant_none") },
  user_not_found: {
    http: () => request("PATCH", "/admin/users/nobody", { disabled: true }, { key: TEST_KEYS.admin.key }),
  },
  sign_in_not_configured: { http: () => app("http://aptix.test/auth/login") },
  api_key_not_found: {
    http: () => request("DELETE", "/admin/keys/key_nope", undefined, { key: TEST_KEYS.admin.key }),
  },
  budget_exceeded: {
    http: async () => {
      const { key } = await newChatKey(`org-budget-${crypto.randomUUID()}`, ["chat", "admin"]);
      await request("PUT", "/admin/budget", { tokensPerDay: 1 }, { key });
      return request(
        "POST",
        "/v1/chat/completions",
        { model: "m", messages: [{ role: "user", content: "hi" }] },
        { key },
      );
    },
  },
  invalid_guardrail: {
    http: () =>
      request(
        "PUT",
        "/admin/guardrails",
        { guardrails: [{ kind: "toxicity", points: ["input"], action: "block" }] },
        {
          key: TEST_KEYS.admin.key,
        },
      ),
  },
  // An org of its own whose guardrails the passthrough applies: a deny word on input blocks the call.
  guardrail_blocked: {
    http: async () => {
      const { key } = await newChatKey(`org-guarded-${crypto.randomUUID()}`, ["chat", "admin"]);
      const deny = { kind: "deny", points: ["input"], action: "block", words: ["falcon"] };
      await request("PUT", "/admin/guardrails", { guardrails: [deny], passthrough: true }, { key });
      return request(
        "POST",
        "/v1/chat/completions",
        { model: "m", messages: [{ role: "user", content: "Tell me about project Falcon" }] },
        { key },
      );
    },
  },
  invalid_ticket: { http: async () => connect(await createSession(), "wst_made_up") },
  insufficient_scope: { http: () => request("PUT", "/admin/modes/x", {}, { key: TEST_KEYS.chat.key }) },
  deployment_owned: {
    http: () =>
      request(
        "PUT",
        "/admin/modes/general",
        { displayName: "Ours", description: "d", systemPrompt: "p", isDefault: true },
        { key: TEST_KEYS.admin.key },
      ),
  },
  secret_not_found: {
    http: () => request("DELETE", "/admin/secrets/NO_SUCH_KEY", undefined, { key: TEST_KEYS.admin.key }),
  },
  webhook_not_found: {
    http: () => request("GET", "/context/webhooks/wh_none", undefined, { key: TEST_KEYS.admin.key }),
  },
  webhook_delivery_not_found: {
    http: async () => {
      const admin = { key: TEST_KEYS.admin.key };
      const created = await request(
        "POST",
        "/context/webhooks",
        { url: "https://hooks.example/a", events: ["schedule.failed"] },
        admin,
      );
      const { endpoint } = (await created.json()) as { endpoint: { id: string } };
      return request("POST", `/context/webhooks/${endpoint.id}/deliveries/msg_none/retry`, undefined, admin);
    },
  },
  webhook_disabled: {
    http: async () => {
      const admin = { key: TEST_KEYS.admin.key };
      const created = await request(
        "POST",
        "/context/webhooks",
        { url: "https://hooks.example/b", events: ["schedule.failed"] },
        admin,
      );
      const { endpoint } = (await created.json()) as { endpoint: { id: string } };
      await request("PATCH", `/context/webhooks/${endpoint.id}`, { enabled: false }, admin);
      return request("POST", `/context/webhooks/${endpoint.id}/test`, undefined, admin);
    },
  },
  schedule_not_found: { http: () => request("GET", "/context/schedules/sch_none") },
  schedule_limit_reached: {
    http: () =>
      request(
        "POST",
        "/context/schedules",
        { name: "over the cap", prompt: "hi", every: "1h" },
        {
          through: workerWith({ SCHEDULES_MAX_PER_USER: "0" }).fetch,
        },
      ),
  },
  memory_not_found: { http: () => request("GET", "/context/memories/mem_none") },
  user_not_disabled: { http: () => request("DELETE", `/admin/users/${TEST_KEYS.otherMember.user}`) },
  memory_disabled: {
    http: async () => {
      const admin = { key: TEST_KEYS.admin.key };
      await request("PUT", "/admin/memory", { enabled: false }, admin);
      const refused = await request("POST", "/context/memories", { text: "Lives in Oslo" });
      await request("PUT", "/admin/memory", { enabled: true }, admin);
      return refused;
    },
  },
  memory_limit_reached: {
    http: async () => {
      const through = workerWith({ MEMORY_MAX_PER_USER: "1" }).fetch;
      await request("POST", "/context/memories", { text: "Has two cats" }, { through });
      return request("POST", "/context/memories", { text: "Plays the oboe" }, { through });
    },
  },
  secret_in_use: {
    http: async () => {
      const admin = { key: TEST_KEYS.admin.key };
      await request("PUT", "/admin/secrets/IN_USE_KEY", { value: "sk-in-use-0123456789" }, admin);
      const route = { provider: "openai_compatible", model: "m", baseUrl: "https://llm.example/v1" };
      await request("PUT", "/admin/model-routes/keyed", { ...route, apiKeySecret: "IN_USE_KEY" }, admin);
      return request("DELETE", "/admin/secrets/IN_USE_KEY", undefined, admin);
    },
  },
  route_not_found: { http: () => request("GET", "/nowhere") },
  session_not_found: { http: () => request("GET", `/context/sessions/${"0".repeat(64)}`) },
  workflow_not_found: {
    http: async () => request("POST", `/context/sessions/${await createSession()}/workflows/nope`, { parameters: {} }),
  },
  system_prompt_not_found: { http: () => request("GET", "/v1/system-prompts/nope/enhanced") },
  mode_not_found: { http: () => request("GET", "/v1/system-prompts/default/enhanced?mode=nope") },
  mode_version_not_found: {
    http: () =>
      request("POST", "/context/sessions", { mode: "general", modeVersion: 99 }, { key: TEST_KEYS.admin.key }),
  },
  eval_dataset_not_found: {
    http: () => request("POST", "/admin/evals", { mode: "general", dataset: "nope" }, { key: TEST_KEYS.admin.key }),
  },
  eval_run_not_found: { http: () => request("GET", "/admin/evals/nope", undefined, { key: TEST_KEYS.admin.key }) },
  model_not_found: {
    http: async () =>
      workerWith({ LLM_BASE_URL: "" }).fetch("http://aptix.test/v1/models/nope", {
        headers: { authorization: `Bearer ${(await newChatKey()).key}` },
      }),
  },
  response_not_found: { http: () => request("GET", "/agent/v1/responses/resp_nowhere") },
  turn_not_found: {
    http: async () => request("GET", `/context/sessions/${await createSession()}/turns/turn_nowhere/timeline`),
  },
  not_offered_by_demo: {
    http: async () =>
      workerWith({ LLM_BASE_URL: "" }).fetch("http://aptix.test/v1/embeddings", {
        method: "POST",
        headers: { authorization: `Bearer ${(await newChatKey()).key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "m", input: "x" }),
      }),
  },
  method_not_allowed: { http: () => request("GET", "/mcp") },
  host_not_allowed: {
    http: async () =>
      workerWith({ ALLOWED_HOSTS: "localhost,127.0.0.1" }).fetch("http://rebound.example:8787/modes", {
        headers: { authorization: `Bearer ${(await newChatKey()).key}` },
      }),
  },
  origin_not_allowed: {
    http: () => app("http://aptix.test/modes", { headers: { ...authHeaders(), origin: "https://elsewhere.example" } }),
  },
  elicitation_not_pending: {
    http: async () =>
      request("POST", `/context/sessions/${await createSession()}/elicitations/elicit_none`, { action: "decline" }),
  },
  invalid_elicitation_answer: {
    http: async () => {
      const server = await registerServer();
      const ask = { name: toolOf(server, "trigger-elicitation-request"), arguments: "{}" };
      const script = await scriptUpstream([{ type: "completion", toolCalls: [ask] }]);
      const id = await createSession(await mcpMode([`mcp:${server}`]));
      const asked = await sendMessage(id, `ask ${script.marker}`);
      const path = `/context/sessions/${id}/elicitations/${asked.elicitation?.elicitationId}`;
      const refused = await request("POST", path, { action: "accept", content: {} });
      await request("POST", path, { action: "cancel" });
      return refused;
    },
  },
  agent_turn_failed: {
    http: async () => {
      const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };
      const script = await scriptUpstream(
        Array.from({ length: 10 }, () => ({ type: "completion", toolCalls: [hello] })),
      );
      return request("POST", "/agent/v1/chat/completions", {
        model: "aptix-agent/general",
        messages: [{ role: "user", content: `loop ${script.marker}` }],
      });
    },
  },
  agent_model_failed: {
    http: () => agentTurnRefused({ status: 401, body: { error: { message: "no", code: "invalid_api_key" } } }),
  },
  context_length_exceeded: {
    http: () => agentTurnRefused({ status: 400, body: openAIContextLengthExceeded(8192, 9000) }),
  },
  content_filtered: {
    http: () =>
      agentTurnRefused({ status: 400, body: { error: { message: "filtered", type: null, code: "content_filter" } } }),
  },
  model_bad_request: {
    http: () => agentTurnRefused({ status: 400, body: { error: { message: "no", type: "invalid_request_error" } } }),
  },
  model_rate_limited: {
    http: () =>
      agentTurnRefused(
        { status: 429, body: { error: { message: "slow down", code: "rate_limit_exceeded" } } },
        { headers: { "retry-after": "0" } },
        3,
      ),
  },
  mcp_server_not_found: {
    http: () => request("DELETE", "/admin/mcp-servers/nope", undefined, { key: TEST_KEYS.admin.key }),
  },
  model_route_not_found: {
    http: () => request("GET", "/admin/model-routes/nope", undefined, { key: TEST_KEYS.admin.key }),
  },
  model_route_in_use: {
    http: async () => {
      const admin = { key: TEST_KEYS.admin.key };
      const route = { provider: "openai_compatible", model: "m", baseUrl: "https://llm.example/v1" };
      await request("PUT", "/admin/model-routes/spare", route, admin);
      await request("PUT", "/admin/model-routes/main", { ...route, fallbacks: ["spare"] }, admin);
      return request("DELETE", "/admin/model-routes/spare", undefined, admin);
    },
  },
  mcp_server_in_use: {
    http: async () => {
      const admin = { key: TEST_KEYS.admin.key };
      const server = { url: "https://mcp.example/mcp", description: "A server.", approval: "always" };
      await request("PUT", "/admin/mcp-servers/inuse", server, admin);
      const mode = { displayName: "Uses MCP", description: "d", systemPrompt: "p", tools: ["mcp:inuse"] };
      await request("PUT", "/admin/modes/uses_mcp", mode, admin);
      return request("DELETE", "/admin/mcp-servers/inuse", undefined, admin);
    },
  },
  session_busy: {
    http: async () => {
      const script = await scriptUpstream([{ type: "completion", content: "slow", delayFirstByteMs: 500 }]);
      const id = await createSession();
      const first = sendMessage(id, `slow ${script.marker}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
      const second = await request("POST", `/context/sessions/${id}/messages`, { content: "again" });
      await first;
      return second;
    },
  },
  session_awaiting_input: {
    http: async () => request("POST", `/context/sessions/${(await pausedSession()).id}/messages`, { content: "hi" }),
  },
  nothing_pending: {
    http: async () =>
      request("POST", `/context/sessions/${await createSession()}/approvals`, {
        decisions: [{ toolCallId: "c", approved: true }],
      }),
  },
  nothing_to_cancel: { frame: () => frameError({ type: "cancel" }) },
  tool_call_not_pending: {
    http: async () =>
      request("POST", `/context/sessions/${(await pausedSession()).id}/approvals`, {
        decisions: [{ toolCallId: "no-such-call", approved: true }],
      }),
  },
  pause_expired: {
    http: async () => {
      const { id, callId } = await pausedSession();
      await expirePauseNow(id);
      return request("POST", `/context/sessions/${id}/approvals`, {
        decisions: [{ toolCallId: callId, approved: true }],
      });
    },
  },
  request_too_large: {
    http: () => request("POST", "/context/sessions", { mode: "x".repeat(1_100_000) }),
  },
  invalid_idempotency_key: { http: () => keyed("POST", "/context/sessions", {}, "k".repeat(256)) },
  idempotency_key_reused: {
    http: async () => {
      const key = crypto.randomUUID();
      await keyed("POST", "/context/sessions", {}, key);
      return keyed("POST", "/context/sessions", { mode: "workspace" }, key);
    },
  },
  idempotency_key_in_flight: {
    http: async () => {
      const key = crypto.randomUUID();
      await holdKey("/context/sessions", {}, key);
      return keyed("POST", "/context/sessions", {}, key);
    },
  },
  idempotency_answer_not_kept: {
    http: async () => {
      const key = crypto.randomUUID();
      await holdKey("/context/sessions", {}, key, { status: 201, headers: {}, body: "", tooLarge: true });
      return keyed("POST", "/context/sessions", {}, key);
    },
  },
  unsupported_media_type: {
    http: () =>
      app("http://aptix.test/context/sessions", {
        method: "POST",
        headers: { ...authHeaders(), "content-type": "text/plain" },
        body: "{}",
      }),
  },
  upgrade_required: { http: async () => app(`http://aptix.test/context/sessions/${await createSession()}/ws`) },
  rate_limit_exceeded: {
    http: async () =>
      workerWith({ MODEL_CALL_LIMITER: refusingLimiter() }).fetch("http://aptix.test/v1/models", {
        headers: authHeaders(),
      }),
  },
  internal_error: {
    http: () => workerWith({ DB: brokenDb() }).fetch("http://aptix.test/modes", { headers: authHeaders() }),
  },
  mode_catalog_corrupt: {
    http: async () => {
      await env.DB.prepare(`UPDATE modes SET tools = '{"not":"a list"}' WHERE key = 'workspace'`).run();
      try {
        return await request("GET", "/modes");
      } finally {
        await env.DB.prepare(
          `UPDATE modes SET tools = '["workspace_read_file","workspace_write_file"]' WHERE key = 'workspace'`,
        ).run();
      }
    },
  },
  misconfigured: {
    http: () => workerWith({ AGENT_MAX_ITERATIONS: "ten" }).fetch("http://aptix.test/healthz"),
  },
  upstream_unreachable: {
    http: async () =>
      workerWith({ LLM_BASE_URL: "http://127.0.0.1:9/v1" }).fetch("http://aptix.test/v1/models", {
        headers: { authorization: `Bearer ${(await newChatKey()).key}` },
      }),
  },
  upstream_auth_failed: {
    http: async () => {
      const script = await scriptUpstream([{ type: "error", status: 401, body: { error: { message: "bad key" } } }]);
      return request(
        "POST",
        "/v1/chat/completions",
        { model: "m", messages: [{ role: "user", content: script.marker }] },
        {
          key: (await newChatKey()).key,
        },
      );
    },
  },
  upstream_stream_failed: {
    event: async () => {
      const chunk = 'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}';
      const script = await scriptUpstream([{ type: "sse", events: [chunk], eventDelayMs: 20, end: "destroy" }]);
      const streamed = await request(
        "POST",
        "/v1/chat/completions",
        { model: "m", stream: true, messages: [{ role: "user", content: script.marker }] },
        { key: (await newChatKey()).key },
      );
      return errorEvent(streamed);
    },
  },
  upstream_invalid_answer: {
    anthropic: async () => {
      // Tool call arguments that are not a JSON object cannot become a tool_use input.
      const call = { id: "c", type: "function", function: { name: "f", arguments: "[1]" } };
      const answer = {
        id: "x",
        choices: [{ message: { content: null, tool_calls: [call] }, finish_reason: "tool_calls" }],
      };
      const script = await scriptUpstream([{ type: "json", body: answer }]);
      return request(
        "POST",
        "/v1/messages",
        { model: "m", max_tokens: 16, messages: [{ role: "user", content: script.marker }] },
        { key: (await newChatKey()).key },
      );
    },
  },
  upstream_timeout: {
    http: async () => {
      const script = await scriptUpstream([{ type: "hang" }]);
      return workerWith({ PASSTHROUGH_FIRST_BYTE_TIMEOUT_MS: "150" }).fetch("http://aptix.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${(await newChatKey()).key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: script.marker }] }),
      });
    },
  },
  upstream_idle_timeout: {
    event: async () => {
      const script = await scriptUpstream([{ type: "sse", events: ['data: {"choices":[]}'], end: "stall" }]);
      const through = workerWith({ PASSTHROUGH_IDLE_TIMEOUT_MS: "150" });
      const streamed = await through.fetch("http://aptix.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${(await newChatKey()).key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: script.marker }] }),
      });
      return errorEvent(streamed);
    },
  },
};

describe("every error code", () => {
  for (const [code, [status, type]] of Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][]) {
    it(`answers ${code} with ${status} and type ${type}`, async () => {
      const trigger = TRIGGERS[code];
      if ("frame" in trigger) {
        expect((await trigger.frame()).code).toBe(code);
        return;
      }
      if ("event" in trigger) {
        expect(await trigger.event()).toMatchObject({ code, type });
        return;
      }
      if ("anthropic" in trigger) {
        const response = await trigger.anthropic();
        const body = (await response.json()) as { type: string; error: { type: string } };
        expect([response.status, body.type, body.error.type]).toEqual([status, "error", anthropicErrorTypeOf(status)]);
        return;
      }
      const response = await trigger.http();
      const body = (await response.json()) as { error: { code: string; type: string } };
      expect([response.status, body.error.code, body.error.type]).toEqual([status, code, type]);
    });
  }
});

// docs/auth.md's table of every route × every caller, walked: each row is requested as an operator and an admin of
// org A, the member of org A who owns what the row acts on, another member of org A, an admin of org B and nobody,
// and each answer is what the table says (allowed, 403, 404 or 401). A route the app serves without a row, a row
// for a route it does not serve, and a row without a request here all fail.
import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import tableDoc from "../../docs/auth.md?raw";
import worker from "../../src/index";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { toUpstreamA } from "../routing/fixtures";

const ORIGIN = "https://aptix.test";
const COLUMNS = ["operator", "admin", "member", "another member", "another org", "nobody"] as const;
type Column = (typeof COLUMNS)[number];
type Expected = "allowed" | "401" | "403" | "404";

/** Who each column is: a key, or none. */
const KEY_OF: Record<Column, string | null> = {
  operator: TEST_KEYS.operator.key,
  admin: TEST_KEYS.admin.key,
  member: TEST_KEYS.chat.key,
  "another member": TEST_KEYS.otherMember.key,
  "another org": TEST_KEYS.otherOrg.key,
  nobody: null,
};

interface Row {
  /** The first cell without its backticks: `PUT /admin/modes/{key} (the deployment's)`. */
  label: string;
  method: string;
  path: string;
  expected: Record<Column, Expected>;
}

/** The table under "## Who may call what". */
function tableRows(): Row[] {
  const section = tableDoc.slice(tableDoc.indexOf("## Who may call what"));
  const lines = section.split("\n").filter((line) => /^\| `[A-Z]+ \//.test(line));
  return lines.map((line) => {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    const label = (cells[0] ?? "").replaceAll("`", "");
    const [method = "", path = ""] = label.split(" ");
    const expected = Object.fromEntries(COLUMNS.map((column, i) => [column, cells[i + 1] as Expected])) as Record<
      Column,
      Expected
    >;
    return { label, method, path, expected };
  });
}

/** A request as `key` (none: no credentials); a redirect is an answer, not followed. */
function send(key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const raw = body === undefined || typeof body === "string" || body instanceof URLSearchParams;
  const all: Record<string, string> = { ...(raw ? {} : { "content-type": "application/json" }), ...headers };
  if (key) all.authorization = `Bearer ${key}`;
  const payload = body === undefined ? {} : { body: raw ? (body as string | URLSearchParams) : JSON.stringify(body) };
  return exports.default.fetch(`${ORIGIN}${path}`, { method, redirect: "manual", headers: all, ...payload });
}

/** A request to the Worker's entry as npm run bench:ops runs it (APTIX_COUNT_OPS=1), as `key`. */
async function sendCounting(key: string | null, method: string, path: string): Promise<Response> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const request: Parameters<typeof worker.fetch>[0] = new Request(`${ORIGIN}${path}`, { method, headers });
  return worker.fetch(request, { ...env, APTIX_COUNT_OPS: "1" }, createExecutionContext());
}

/** A request as someone of org A, for what a row needs to exist first; it must succeed. */
async function setUp(
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const response = await send(key, method, path, body, headers);
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} as set-up failed (${response.status}): ${text}`);
  return text ? JSON.parse(text) : null;
}

const MEMBER = TEST_KEYS.chat.key;
const ADMIN = TEST_KEYS.admin.key;
const OPERATOR = TEST_KEYS.operator.key;

/** The scripted upstream's marker every model call of this file carries (a script that answers again and again). */
let marker = "";
const say = (text: string) => `${text} ${marker}`;

/** The member's session, made for each request (a DELETE of one does not take it from the next column). */
async function memberSession(): Promise<string> {
  return ((await setUp(MEMBER, "POST", "/context/sessions", {})) as { sessionId: string }).sessionId;
}

/** The member's webhook endpoint's path, made for each request. */
async function memberWebhook(): Promise<string> {
  return `/context/webhooks/${((await setUp(MEMBER, "POST", "/context/webhooks", webhookBody)) as { endpoint: { id: string } }).endpoint.id}`;
}

/** The member's schedule (hourly), made for each request; its runs say hi to the scripted upstream. */
async function memberSchedule(): Promise<string> {
  const body = { name: "The member's", prompt: say("hi"), every: "1h" };
  return ((await setUp(MEMBER, "POST", "/context/schedules", body)) as { scheduleId: string }).scheduleId;
}

/** The member's memory, made for each request: its id. */
async function memberMemory(): Promise<string> {
  return (
    (await setUp(MEMBER, "POST", "/context/memories", { text: fresh("The member's fact numbered ") })) as { id: string }
  ).id;
}

/** An org memory of org A (an admin's), made for each request: its id. */
async function orgMemory(): Promise<string> {
  const body = { text: fresh("Org A's fact numbered "), scope: "org" };
  return ((await setUp(ADMIN, "POST", "/context/memories", body)) as { id: string }).id;
}

async function memberTurn(): Promise<{ session: string; turnId: string }> {
  const session = await memberSession();
  await setUp(MEMBER, "POST", `/context/sessions/${session}/messages`, { content: say("hi") });
  const page = (await setUp(MEMBER, "GET", `/context/sessions/${session}/messages`)) as {
    messages: { turnId: string }[];
  };
  return { session, turnId: page.messages[0]?.turnId ?? "" };
}

/** The A2A version header every A2A request carries. */
const A2A_VERSION = { "a2a-version": "1.0" };

/** An A2A message:send body, its text carrying the file's marker. */
function a2aMessage() {
  return { message: { messageId: fresh("a2a-message-"), role: "ROLE_USER", parts: [{ text: say("hi") }] } };
}

/** The member's A2A task, made for each request: its id. */
async function memberTask(): Promise<string> {
  const sent = (await setUp(MEMBER, "POST", "/a2a/rest/message:send", a2aMessage(), A2A_VERSION)) as {
    task: { id: string };
  };
  return sent.task.id;
}

/** The member's A2A task with a push notification config `c1`: the task's id. */
async function memberTaskWithConfig(): Promise<string> {
  const task = await memberTask();
  const config = { url: "https://hooks.example/a2a", id: "c1" };
  await setUp(MEMBER, "POST", `/a2a/rest/tasks/${task}/pushNotificationConfigs`, config, A2A_VERSION);
  return task;
}

const routeBody = { provider: "openai_compatible", model: "m", baseUrl: "https://llm.example/v1" };
const modeBody = { displayName: "A mode", description: "For the table.", systemPrompt: "Answer." };
const serverBody = { url: "https://mcp.example/mcp", description: "A server.", approval: "always" };
/** At the test receiver (the test event goes there), subscribed to an event no test here publishes. */
const webhookBody = { url: `${env.TEST_WEBHOOK_RECEIVER_URL}/hooks/roles`, events: ["schedule.failed"] };
let unique = 0;
const fresh = (prefix: string) => `${prefix}${++unique}`;

type Request = (key: string | null) => Promise<Response>;

/** A finished eval run of org A, stored as the queue's consumer leaves one. */
let evalRun: string | undefined;
async function orgAEvalRun(): Promise<string> {
  if (!evalRun) {
    evalRun = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO eval_runs (id, org, mode, dataset, status, results, created_at, created_by)
       VALUES (?, 'org-a', 'general', 'roles', 'completed', '[]', ?, 'alice')`,
    )
      .bind(evalRun, new Date().toISOString())
      .run();
  }
  return evalRun;
}

/** How each row is requested. */
const REQUESTS: Record<string, Request> = {
  "GET /healthz": (key) => send(key, "GET", "/healthz"),
  "GET /openapi.json": (key) => send(key, "GET", "/openapi.json"),
  "GET /auth/me": (key) => send(key, "GET", "/auth/me"),
  "POST /auth/logout": (key) => send(key, "POST", "/auth/logout"),
  "GET /auth/session": (key) => send(key, "GET", "/auth/session"),
  "POST /auth/session (a sign-in form)": (key) =>
    send(key, "POST", "/auth/session", new URLSearchParams({ api_key: MEMBER, return_to: "/" }), {
      "content-type": "application/x-www-form-urlencoded",
    }),
  "GET /auth/providers": (key) => send(key, "GET", "/auth/providers"),
  "GET /auth/login": (key) => send(key, "GET", "/auth/login"),
  "GET /auth/callback": (key) => send(key, "GET", "/auth/callback"),
  "GET /authorize": (key) => send(key, "GET", "/authorize?client_id=unknown&response_type=code"),
  "POST /authorize (the consent form: a browser session's, never a key's)": (key) =>
    send(key, "POST", "/authorize", new URLSearchParams({ handle: "h", decision: "allow" }), {
      "content-type": "application/x-www-form-urlencoded",
    }),
  "POST /oauth/token": (key) =>
    send(key, "POST", "/oauth/token", new URLSearchParams({ grant_type: "authorization_code", code: "a:b:c" }), {
      "content-type": "application/x-www-form-urlencoded",
    }),
  "POST /oauth/revoke": (key) =>
    send(key, "POST", "/oauth/revoke", new URLSearchParams({ token: "a:b:c" }), {
      "content-type": "application/x-www-form-urlencoded",
    }),
  "POST /oauth/register": (key) =>
    send(key, "POST", "/oauth/register", {
      client_name: "Table",
      redirect_uris: ["http://127.0.0.1:9/callback"],
      token_endpoint_auth_method: "none",
    }),
  "GET /.well-known/oauth-authorization-server": (key) => send(key, "GET", "/.well-known/oauth-authorization-server"),
  "GET /.well-known/oauth-protected-resource/mcp": (key) =>
    send(key, "GET", "/.well-known/oauth-protected-resource/mcp"),
  "GET /.well-known/oauth-protected-resource/a2a": (key) =>
    send(key, "GET", "/.well-known/oauth-protected-resource/a2a"),
  "GET /modes": (key) => send(key, "GET", "/modes"),
  "GET /workflows": (key) => send(key, "GET", "/workflows"),
  "GET /workflows/categories": (key) => send(key, "GET", "/workflows/categories"),
  "POST /context/webhooks": (key) => send(key, "POST", "/context/webhooks", webhookBody),
  "GET /context/webhooks": (key) => send(key, "GET", "/context/webhooks"),
  "GET /context/webhooks/{id} (the member's)": async (key) => send(key, "GET", await memberWebhook()),
  "PATCH /context/webhooks/{id} (the member's)": async (key) =>
    send(key, "PATCH", await memberWebhook(), { description: "Changed." }),
  "DELETE /context/webhooks/{id} (the member's)": async (key) => send(key, "DELETE", await memberWebhook()),
  "POST /context/webhooks/{id}/test (the member's)": async (key) => send(key, "POST", `${await memberWebhook()}/test`),
  "GET /context/webhooks/{id}/deliveries (the member's)": async (key) =>
    send(key, "GET", `${await memberWebhook()}/deliveries`),
  // A delivery that does not exist is the route's own 404 (webhook_delivery_not_found): the endpoint was reached.
  "POST /context/webhooks/{id}/deliveries/{deliveryId}/retry (the member's)": async (key) =>
    send(key, "POST", `${await memberWebhook()}/deliveries/msg_none/retry`),
  "GET /v1/system-prompts/{id}/enhanced": (key) => send(key, "GET", "/v1/system-prompts/default/enhanced"),
  "GET /v1/models": (key) => send(key, "GET", "/v1/models"),
  "GET /v1/models/{model}": (key) => send(key, "GET", "/v1/models/scripted-model"),
  "POST /v1/chat/completions": (key) =>
    send(key, "POST", "/v1/chat/completions", { model: "m", messages: [{ role: "user", content: say("hi") }] }),
  "POST /v1/completions": (key) => send(key, "POST", "/v1/completions", { model: "m", prompt: say("hi") }),
  "POST /v1/embeddings": (key) => send(key, "POST", "/v1/embeddings", { model: "m", input: say("hi") }),
  "POST /v1/responses": (key) => send(key, "POST", "/v1/responses", { model: "m", input: say("hi") }),
  "POST /v1/messages": (key) =>
    send(key, "POST", "/v1/messages", { model: "m", max_tokens: 9, messages: [{ role: "user", content: say("hi") }] }),
  "POST /v1/messages/count_tokens": (key) =>
    send(key, "POST", "/v1/messages/count_tokens", { model: "m", messages: [{ role: "user", content: "hi" }] }),
  "GET /agent/v1/models": (key) => send(key, "GET", "/agent/v1/models"),
  "GET /agent/v1/models/{model}": (key) => send(key, "GET", "/agent/v1/models/aptix-agent%2Fgeneral"),
  "POST /agent/v1/chat/completions": (key) =>
    send(key, "POST", "/agent/v1/chat/completions", {
      model: "aptix-agent/general",
      messages: [{ role: "user", content: say("hi") }],
    }),
  "POST /agent/v1/responses": (key) =>
    send(key, "POST", "/agent/v1/responses", { model: "aptix-agent/general", input: say("hi"), store: false }),
  "GET /agent/v1/responses/{id} (the member's kept response)": async (key) =>
    send(key, "GET", `/agent/v1/responses/${await memberResponse()}`),
  "DELETE /agent/v1/responses/{id} (the member's kept response)": async (key) =>
    send(key, "DELETE", `/agent/v1/responses/${await memberResponse()}`),
  "POST /agent/v1/messages": (key) =>
    send(key, "POST", "/agent/v1/messages", {
      model: "aptix-agent/general",
      max_tokens: 9,
      messages: [{ role: "user", content: say("hi") }],
    }),
  "POST /agent/v1/messages/count_tokens": (key) =>
    send(key, "POST", "/agent/v1/messages/count_tokens", {
      model: "aptix-agent/general",
      messages: [{ role: "user", content: "hi" }],
    }),
  "POST /mcp": (key) =>
    send(
      key,
      "POST",
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      {
        accept: "application/json, text/event-stream",
      },
    ),
  "GET /mcp": (key) => send(key, "GET", "/mcp"),
  "DELETE /mcp": (key) => send(key, "DELETE", "/mcp"),
  "GET /.well-known/agent-card.json": (key) => send(key, "GET", "/.well-known/agent-card.json"),
  "POST /a2a/jsonrpc": (key) =>
    send(key, "POST", "/a2a/jsonrpc", { jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }, A2A_VERSION),
  "GET /a2a/rest/extendedAgentCard": (key) => send(key, "GET", "/a2a/rest/extendedAgentCard", undefined, A2A_VERSION),
  "POST /a2a/rest/{op} (message:send)": (key) => send(key, "POST", "/a2a/rest/message:send", a2aMessage(), A2A_VERSION),
  "GET /a2a/rest/tasks": (key) => send(key, "GET", "/a2a/rest/tasks", undefined, A2A_VERSION),
  "GET /a2a/rest/tasks/{ref} (the member's task)": async (key) =>
    send(key, "GET", `/a2a/rest/tasks/${await memberTask()}`, undefined, A2A_VERSION),
  "POST /a2a/rest/tasks/{ref} (cancelling the member's task)": async (key) =>
    send(key, "POST", `/a2a/rest/tasks/${await memberTask()}:cancel`, undefined, A2A_VERSION),
  "GET /a2a/rest/tasks/{id}/pushNotificationConfigs (the member's task)": async (key) =>
    send(key, "GET", `/a2a/rest/tasks/${await memberTask()}/pushNotificationConfigs`, undefined, A2A_VERSION),
  "POST /a2a/rest/tasks/{id}/pushNotificationConfigs (the member's task)": async (key) =>
    send(
      key,
      "POST",
      `/a2a/rest/tasks/${await memberTask()}/pushNotificationConfigs`,
      { url: "https://hooks.example/a2a" },
      A2A_VERSION,
    ),
  "GET /a2a/rest/tasks/{id}/pushNotificationConfigs/{configId} (the member's task)": async (key) =>
    send(
      key,
      "GET",
      `/a2a/rest/tasks/${await memberTaskWithConfig()}/pushNotificationConfigs/c1`,
      undefined,
      A2A_VERSION,
    ),
  "DELETE /a2a/rest/tasks/{id}/pushNotificationConfigs/{configId} (the member's task)": async (key) =>
    send(
      key,
      "DELETE",
      `/a2a/rest/tasks/${await memberTaskWithConfig()}/pushNotificationConfigs/c1`,
      undefined,
      A2A_VERSION,
    ),
  "GET /context/grants": (key) => send(key, "GET", "/context/grants"),
  "DELETE /context/grants/{id} (the member's grant: a person's own)": async (key) =>
    send(key, "DELETE", `/context/grants/${await memberGrant()}`),
  "POST /context/sessions": (key) => send(key, "POST", "/context/sessions", {}),
  "POST /context/sessions (pinned to a mode version)": (key) =>
    send(key, "POST", "/context/sessions", { mode: "general", modeVersion: 1 }),
  "GET /context/sessions": (key) => send(key, "GET", "/context/sessions"),
  "GET /context/search (the caller's own sessions)": (key) => send(key, "GET", "/context/search?q=table"),
  "GET /context/search (all=true: the org's sessions)": (key) => send(key, "GET", "/context/search?q=table&all=true"),
  "GET /context/sessions/{sessionId} (the member's)": async (key) =>
    send(key, "GET", `/context/sessions/${await memberSession()}`),
  "PATCH /context/sessions/{sessionId} (the member's)": async (key) =>
    send(key, "PATCH", `/context/sessions/${await memberSession()}`, { title: "Renamed" }),
  "DELETE /context/sessions/{sessionId} (the member's)": async (key) =>
    send(key, "DELETE", `/context/sessions/${await memberSession()}`),
  "POST /context/sessions/{sessionId}/branches (the member's)": async (key) => {
    const { session } = await memberTurn();
    return send(key, "POST", `/context/sessions/${session}/branches`, { beforeMessage: 1 });
  },
  "GET /context/sessions/{sessionId}/summary (the member's)": async (key) =>
    send(key, "GET", `/context/sessions/${await memberSession()}/summary`),
  "GET /context/sessions/{sessionId}/messages (the member's)": async (key) =>
    send(key, "GET", `/context/sessions/${await memberSession()}/messages`),
  "POST /context/sessions/{sessionId}/messages (the member's)": async (key) =>
    send(key, "POST", `/context/sessions/${await memberSession()}/messages`, { content: say("hi") }),
  "GET /context/sessions/{sessionId}/turns (the member's)": async (key) =>
    send(key, "GET", `/context/sessions/${await memberSession()}/turns`),
  "GET /context/sessions/{sessionId}/turns/{turnId} (the member's)": async (key) => {
    const { session, turnId } = await memberTurn();
    return send(key, "GET", `/context/sessions/${session}/turns/${turnId}`);
  },
  "GET /context/sessions/{sessionId}/turns/{turnId}/timeline (the member's)": async (key) => {
    const { session, turnId } = await memberTurn();
    return send(key, "GET", `/context/sessions/${session}/turns/${turnId}/timeline`);
  },
  "POST /context/sessions/{sessionId}/ws-ticket (the member's)": async (key) =>
    send(key, "POST", `/context/sessions/${await memberSession()}/ws-ticket`),
  "GET /context/sessions/{sessionId}/ws (takes a ticket, not a key)": async (key) =>
    send(key, "GET", `/context/sessions/${await memberSession()}/ws`, undefined, { upgrade: "websocket" }),
  "POST /context/sessions/{sessionId}/approvals (the member's)": async (key) =>
    send(key, "POST", `/context/sessions/${await memberSession()}/approvals`, {
      decisions: [{ toolCallId: "call_x", approved: true }],
    }),
  "POST /context/sessions/{sessionId}/tool-results (the member's)": async (key) =>
    send(key, "POST", `/context/sessions/${await memberSession()}/tool-results`, {
      results: [{ toolCallId: "call_x", resultJson: "{}" }],
    }),
  "POST /context/sessions/{sessionId}/elicitations/{elicitationId} (the member's)": async (key) =>
    send(key, "POST", `/context/sessions/${await memberSession()}/elicitations/el_x`, { action: "decline" }),
  "GET /context/sessions/{sessionId}/export (the member's)": async (key) =>
    send(key, "GET", `/context/sessions/${await memberSession()}/export`),
  "POST /context/sessions/{sessionId}/workflows/{workflowId} (the member's)": async (key) =>
    send(key, "POST", `/context/sessions/${await memberSession()}/workflows/switch_mode`, {
      parameters: { mode: "workspace" },
    }),
  "POST /context/schedules": (key) =>
    send(key, "POST", "/context/schedules", { name: "Table", prompt: "hi", every: "1h" }),
  "GET /context/schedules": (key) => send(key, "GET", "/context/schedules"),
  "GET /context/schedules/{scheduleId} (the member's)": async (key) =>
    send(key, "GET", `/context/schedules/${await memberSchedule()}`),
  "PATCH /context/schedules/{scheduleId} (the member's)": async (key) =>
    send(key, "PATCH", `/context/schedules/${await memberSchedule()}`, { enabled: false }),
  "DELETE /context/schedules/{scheduleId} (the member's)": async (key) =>
    send(key, "DELETE", `/context/schedules/${await memberSchedule()}`),
  "POST /context/schedules/{scheduleId}/run (the member's)": async (key) =>
    send(key, "POST", `/context/schedules/${await memberSchedule()}/run`),
  "GET /context/schedules/{scheduleId}/runs (the member's)": async (key) =>
    send(key, "GET", `/context/schedules/${await memberSchedule()}/runs`),
  "GET /context/memories": (key) => send(key, "GET", "/context/memories"),
  "POST /context/memories": (key) => send(key, "POST", "/context/memories", { text: fresh("A fact numbered ") }),
  "POST /context/memories (an org memory)": (key) =>
    send(key, "POST", "/context/memories", { text: fresh("An org fact numbered "), scope: "org" }),
  "DELETE /context/memories": (key) => send(key, "DELETE", "/context/memories"),
  "GET /context/memories/{memoryId} (the member's)": async (key) =>
    send(key, "GET", `/context/memories/${await memberMemory()}`),
  "GET /context/memories/{memoryId} (an org memory of org A)": async (key) =>
    send(key, "GET", `/context/memories/${await orgMemory()}`),
  "PATCH /context/memories/{memoryId} (the member's)": async (key) =>
    send(key, "PATCH", `/context/memories/${await memberMemory()}`, { pinned: true }),
  "DELETE /context/memories/{memoryId} (the member's)": async (key) =>
    send(key, "DELETE", `/context/memories/${await memberMemory()}`),
  "PATCH /context/memories/{memoryId} (an org memory of org A)": async (key) =>
    send(key, "PATCH", `/context/memories/${await orgMemory()}`, { pinned: true }),
  "DELETE /context/memories/{memoryId} (an org memory of org A)": async (key) =>
    send(key, "DELETE", `/context/memories/${await orgMemory()}`),
  "GET /context/export": (key) => send(key, "GET", "/context/export"),
  "GET /admin/modes": (key) => send(key, "GET", "/admin/modes"),
  "PUT /admin/modes/{key} (the deployment's)": (key) =>
    send(key, "PUT", `/admin/modes/${fresh("dmode")}?owner=deployment`, modeBody),
  "PUT /admin/modes/{key} (the org's own)": (key) =>
    send(key, "PUT", `/admin/modes/${fresh("omode")}?owner=org`, modeBody),
  "PUT /admin/modes/{key} (hiding a deployment mode in the org)": (key) =>
    send(key, "PUT", "/admin/modes/ddr_authoring", { enabled: false }),
  "GET /admin/tools": (key) => send(key, "GET", "/admin/tools"),
  "DELETE /admin/modes/{key} (the deployment's)": async (key) =>
    send(key, "DELETE", `/admin/modes/${await ownedMode(OPERATOR, "deployment")}`),
  "DELETE /admin/modes/{key} (org A's own)": async (key) =>
    send(key, "DELETE", `/admin/modes/${await ownedMode(ADMIN, "org")}`),
  "PATCH /admin/modes/{key} (org A's own)": async (key) =>
    send(key, "PATCH", `/admin/modes/${await sharedMode()}`, { description: "Changed." }),
  "PATCH /admin/modes/{key} (the deployment's)": async (key) =>
    send(key, "PATCH", `/admin/modes/${await deploymentMode()}?owner=deployment`, { description: "Changed." }),
  "POST /admin/modes/{key}/versions/{version}/restore (the deployment's)": async (key) =>
    send(key, "POST", `/admin/modes/${await deploymentMode()}/versions/1/restore?owner=deployment`),
  "GET /admin/modes/{key}/versions (org A's own)": async (key) =>
    send(key, "GET", `/admin/modes/${await sharedMode()}/versions`),
  "GET /admin/modes/{key}/versions/{version} (org A's own)": async (key) =>
    send(key, "GET", `/admin/modes/${await sharedMode()}/versions/1`),
  "GET /admin/modes/{key}/versions/{version}/diff (org A's own)": async (key) =>
    send(key, "GET", `/admin/modes/${await sharedMode()}/versions/1/diff`),
  "POST /admin/modes/{key}/versions/{version}/restore (org A's own)": async (key) =>
    send(key, "POST", `/admin/modes/${await sharedMode()}/versions/1/restore`),
  "GET /admin/model-routes": (key) => send(key, "GET", "/admin/model-routes"),
  "GET /admin/model-routes/{name} (org A's own)": async (key) =>
    send(key, "GET", `/admin/model-routes/${await orgARoute()}`),
  "PUT /admin/model-routes/{name} (the deployment's)": (key) =>
    send(key, "PUT", `/admin/model-routes/${fresh("droute")}?owner=deployment`, routeBody),
  "PUT /admin/model-routes/{name} (the org's own)": (key) =>
    send(key, "PUT", `/admin/model-routes/${fresh("oroute")}?owner=org`, routeBody),
  "DELETE /admin/model-routes/{name} (the deployment's)": async (key) =>
    send(key, "DELETE", `/admin/model-routes/${await toUpstreamA()}`),
  "DELETE /admin/model-routes/{name} (org A's own)": async (key) =>
    send(key, "DELETE", `/admin/model-routes/${await orgARoute()}`),
  // The routes the rows above wrote go to hosts that do not resolve; a lookup may take seconds to fail here.
  "GET /admin/health": (key) => send(key, "GET", "/admin/health?timeoutMs=500"),
  "GET /admin/health (the deployment's)": (key) => send(key, "GET", "/admin/health?owner=deployment&timeoutMs=500"),
  "GET /admin/mcp-servers": (key) => send(key, "GET", "/admin/mcp-servers"),
  "PUT /admin/mcp-servers/{name} (the deployment's)": (key) =>
    send(key, "PUT", `/admin/mcp-servers/${fresh("dserver")}?owner=deployment`, serverBody),
  "PUT /admin/mcp-servers/{name} (the org's own)": (key) =>
    send(key, "PUT", `/admin/mcp-servers/${fresh("oserver")}?owner=org`, serverBody),
  "DELETE /admin/mcp-servers/{name} (the deployment's)": async (key) => {
    const name = fresh("dserver");
    await setUp(OPERATOR, "PUT", `/admin/mcp-servers/${name}?owner=deployment`, serverBody);
    return send(key, "DELETE", `/admin/mcp-servers/${name}`);
  },
  "DELETE /admin/mcp-servers/{name} (org A's own)": async (key) => {
    const name = fresh("oserver");
    await setUp(ADMIN, "PUT", `/admin/mcp-servers/${name}?owner=org`, serverBody);
    return send(key, "DELETE", `/admin/mcp-servers/${name}`);
  },
  "GET /admin/secrets": (key) => send(key, "GET", "/admin/secrets"),
  "PUT /admin/secrets/{name}": (key) =>
    send(key, "PUT", `/admin/secrets/${fresh("KEY_").toUpperCase()}`, { value: "sk-a-table-value-0123" }),
  "DELETE /admin/secrets/{name} (org A's)": async (key) => {
    const name = fresh("KEY_").toUpperCase();
    await setUp(ADMIN, "PUT", `/admin/secrets/${name}`, { value: "sk-a-table-value-0123" });
    return send(key, "DELETE", `/admin/secrets/${name}`);
  },
  "POST /admin/secrets/rewrap": (key) => send(key, "POST", "/admin/secrets/rewrap"),
  "GET /admin/audit": (key) => send(key, "GET", "/admin/audit"),
  "GET /admin/keys": (key) => send(key, "GET", "/admin/keys"),
  "POST /admin/keys": (key) => send(key, "POST", "/admin/keys", { name: "table" }),
  "PATCH /admin/keys/{id} (a key of org A)": async (key) =>
    send(key, "PATCH", `/admin/keys/${await orgAKey()}`, { name: "renamed" }),
  "DELETE /admin/keys/{id} (a key of org A)": async (key) => send(key, "DELETE", `/admin/keys/${await orgAKey()}`),
  "GET /admin/budget": (key) => send(key, "GET", "/admin/budget"),
  "PUT /admin/budget": (key) => send(key, "PUT", "/admin/budget", { tokensPerDay: null }),
  "GET /admin/usage": (key) => send(key, "GET", "/admin/usage"),
  "GET /admin/usage/calls": (key) => send(key, "GET", "/admin/usage/calls"),
  "GET /admin/bench/ops (APTIX_COUNT_OPS=1; else 404 for all)": (key) => sendCounting(key, "GET", "/admin/bench/ops"),
  "DELETE /admin/bench/ops (APTIX_COUNT_OPS=1; else 404 for all)": (key) =>
    sendCounting(key, "DELETE", "/admin/bench/ops"),
  "POST /admin/evals/datasets": (key) =>
    send(key, "POST", "/admin/evals/datasets", {
      name: "roles",
      cases: [{ name: "a", messages: [{ role: "user", content: "x" }], expect: {} }],
    }),
  "GET /admin/evals/datasets": (key) => send(key, "GET", "/admin/evals/datasets"),
  // A dataset no org has: the run is refused after the caller is checked (nothing is queued).
  "POST /admin/evals": (key) => send(key, "POST", "/admin/evals", { mode: "general", dataset: "none-such" }),
  "GET /admin/evals": (key) => send(key, "GET", "/admin/evals"),
  "GET /admin/evals/{id} (a run of org A)": async (key) => send(key, "GET", `/admin/evals/${await orgAEvalRun()}`),
  "GET /admin/users": (key) => send(key, "GET", "/admin/users"),
  "PATCH /admin/users/{id} (a member of org A)": (key) =>
    send(key, "PATCH", `/admin/users/${TEST_KEYS.otherMember.user}`, { disabled: false }),
  // Refused 409 user_not_disabled by whoever may ask: the route was reached, and nothing of the member's goes.
  "DELETE /admin/users/{id} (a member of org A, not disabled)": (key) =>
    send(key, "DELETE", `/admin/users/${TEST_KEYS.otherMember.user}`),
  "GET /admin/memory": (key) => send(key, "GET", "/admin/memory"),
  // On, as it is: the table's other memory rows run with the org's memory on.
  "PUT /admin/memory": (key) => send(key, "PUT", "/admin/memory", { enabled: true }),
  "GET /admin/guardrails": (key) => send(key, "GET", "/admin/guardrails"),
  // None, as it is: the other rows' turns and passthrough calls run with no guardrail of the org's.
  "PUT /admin/guardrails": (key) => send(key, "PUT", "/admin/guardrails", { guardrails: [], passthrough: false }),
};

async function memberResponse(): Promise<string> {
  const answer = (await setUp(MEMBER, "POST", "/agent/v1/responses", {
    model: "aptix-agent/general",
    input: say("hi"),
  })) as {
    id: string;
  };
  return answer.id;
}

async function memberGrant(): Promise<string> {
  const id = `grant_${crypto.randomUUID().replaceAll("-", "")}`;
  await env.DB.prepare(
    `INSERT INTO oauth_grants (id, kv_grant_id, org, user_id, client_id, client_name, scopes, resource)
     VALUES (?, 'kv', 'org-a', ?, 'client', 'A client', '["chat"]', 'https://aptix.test/mcp')`,
  )
    .bind(id, TEST_KEYS.chat.user)
    .run();
  return id;
}

async function orgARoute(): Promise<string> {
  const name = fresh("aroute");
  await setUp(ADMIN, "PUT", `/admin/model-routes/${name}?owner=org`, routeBody);
  return name;
}

/** One mode of org A's own, made once, for the rows that change or read it but never remove it (its versions). */
let shared: Promise<string> | undefined;
const sharedMode = () => {
  shared ??= ownedMode(ADMIN, "org");
  return shared;
};

/** One mode of the deployment's for the rows that change one (each change makes a version; none removes it). */
let deployment: Promise<string> | undefined;
const deploymentMode = () => {
  deployment ??= ownedMode(OPERATOR, "deployment");
  return deployment;
};

/** A new mode, the deployment's or org A's own. */
async function ownedMode(by: string, owner: "deployment" | "org"): Promise<string> {
  const key = fresh(owner === "org" ? "amode" : "xmode");
  await setUp(by, "PUT", `/admin/modes/${key}?owner=${owner}`, modeBody);
  return key;
}

async function orgAKey(): Promise<string> {
  return ((await setUp(ADMIN, "POST", "/admin/keys", { name: "to change" })) as { key: { id: string } }).key.id;
}

/**
 * The refusals about who the caller is (as opposed to what they asked): no or a bad credential, a role too small, or
 * someone else's (answered as not there). A route's other 401s, 403s and 404s (OAuth's own `invalid_client`, a
 * sign-in not configured, a turn that does not exist) are the route doing its work.
 */
const WHO_REFUSALS: Record<string, Expected> = {
  missing_api_key: "401",
  invalid_api_key: "401",
  invalid_ticket: "401",
  insufficient_scope: "403",
  deployment_owned: "403",
  session_not_found: "404",
  response_not_found: "404",
  grant_not_found: "404",
  model_route_not_found: "404",
  mcp_server_not_found: "404",
  secret_not_found: "404",
  api_key_not_found: "404",
  user_not_found: "404",
  mode_not_found: "404",
  webhook_not_found: "404",
  schedule_not_found: "404",
  memory_not_found: "404",
  eval_run_not_found: "404",
};

/** An Anthropic-shaped refusal's type, as the code aptix's shape would carry. */
const ANTHROPIC_WHO: Record<string, string> = {
  authentication_error: "missing_api_key",
  permission_error: "insufficient_scope",
};

/** What a caller got, as the table writes it: an HTML page's 401 (sign in first) is who they are too. */
async function asWritten(response: Response): Promise<Expected> {
  const text = await response.text();
  if (response.status === 401 && (response.headers.get("content-type") ?? "").startsWith("text/html")) return "401";
  let error: { code?: unknown; type?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: { code?: unknown; type?: unknown } }).error;
  } catch {
    // Not JSON: a page, a stream, a redirect.
  }
  // The Messages wire answers in Anthropic's shape: no code, a type that says who was refused.
  // The A2A door's HTTP+JSON binding says a task is not found in its own shape (a status name, a numeric code).
  if (response.status === 404 && (error as { status?: unknown } | undefined)?.status === "NOT_FOUND") return "404";
  const code = typeof error?.code === "string" ? error.code : ANTHROPIC_WHO[String(error?.type)];
  const refusal = code ? WHO_REFUSALS[code] : undefined;
  if (refusal && String(response.status) === refusal) return refusal;
  return "allowed";
}

beforeAll(async () => {
  marker = (await scriptUpstream([{ type: "completion", content: "Hello." }], env.TEST_UPSTREAM_URL, { repeat: true }))
    .marker;
});

// Each request of a row makes the member a session of its own, a few hundred over the file, each holding a copy of
// the member's memories from its creation (src/session/memory-copy.ts): a change of one of the member's memories
// tells every one of them before it answers. That is a few seconds on a loaded machine, not the default 5.
describe("docs/auth.md's route × role table", { timeout: 15_000 }, () => {
  const rows = tableRows();

  it("has a row for every route the app serves, and none for a route it does not", async () => {
    const response = await send(OPERATOR, "GET", "/openapi.json");
    const doc = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
    const served = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const inTable = new Set(rows.map((row) => `${row.method} ${row.path}`));
    expect(served.filter((route) => !inTable.has(route))).toEqual([]);
    expect([...inTable].filter((route) => !served.includes(route))).toEqual([]);
  });

  it("has a request here for every row, and a row for every request", () => {
    expect(rows.map((row) => row.label).filter((label) => !(label in REQUESTS))).toEqual([]);
    const labels = new Set(rows.map((row) => row.label));
    expect(Object.keys(REQUESTS).filter((label) => !labels.has(label))).toEqual([]);
  });

  for (const row of tableRows()) {
    it(`${row.label}: ${COLUMNS.map((c) => `${c} ${row.expected[c]}`).join(", ")}`, async () => {
      const request = REQUESTS[row.label];
      if (!request) throw new Error(`no request for ${row.label}`);
      const got: Record<string, Expected> = {};
      for (const column of COLUMNS) {
        const response = await request(KEY_OF[column]);
        expect(response.status, `${row.label} as ${column}`).toBeLessThan(500);
        got[column] = await asWritten(response);
      }
      expect(got).toEqual(row.expected);
    });
  }
});

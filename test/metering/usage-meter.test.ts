// One meter for every model call: a row per upstream call of the passthrough and of agent turns (user, session,
// mode, route, model, tokens, latency, outcome). A stream whose client did not ask for its usage is metered all
// the same, and the client gets exactly the bytes the upstream would have sent it; a client that leaves mid-stream
// leaves a partial row.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders } from "../fixtures/keys";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { BASE_URL, newChatKey, type TestKey, workerWith } from "../passthrough/harness";
import { TEST_UPSTREAM_API_KEY } from "../upstream/global-setup";

interface Row {
  user_id: string;
  session_id: string | null;
  mode: string | null;
  endpoint: string;
  route: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  latency_ms: number;
  outcome: string;
}

async function rowsWhere(column: "key_id" | "session_id", value: string): Promise<Row[]> {
  const { results } = await env.DB.prepare(
    `SELECT user_id, session_id, mode, endpoint, route, model, prompt_tokens, completion_tokens, total_tokens, latency_ms,
       outcome FROM usage_records WHERE ${column} = ? ORDER BY created_at`,
  )
    .bind(value)
    .all<Row>();
  return results;
}

const rowsOf = (keyId: string) => rowsWhere("key_id", keyId);

/** A session's rows once `count` are written: the object writes them in a batch after its reply. */
async function sessionRows(sessionId: string, count: number): Promise<Row[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const rows = await rowsWhere("session_id", sessionId);
    if (rows.length >= count || Date.now() > deadline) return rows;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function chat(key: TestKey, body: Record<string, unknown>, via: ReturnType<typeof workerWith>, signal?: AbortSignal) {
  return via.fetch(`${BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** The bytes the scripted upstream sends for `body` when asked directly, with no aptix in between. */
async function direct(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${env.TEST_UPSTREAM_URL}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_UPSTREAM_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return response.text();
}

const usage = { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 };
const step = { type: "completion" as const, id: "chatcmpl-fixed", content: "Exactly these bytes.", usage };

describe("the meter", () => {
  it("meters a stream whose client did not ask for usage, which gets exactly the bytes it would have got", async () => {
    const script = await scriptUpstream([step, step]);
    const key = await newChatKey();
    const via = workerWith();
    const body = { model: "m", stream: true, messages: [{ role: "user", content: script.marker }] };
    const through = await (await chat(key, body, via)).text();
    const [sent] = await script.bodies();
    expect(sent?.stream_options).toEqual({ include_usage: true });
    expect(through).toBe(await direct(body));
    expect(through).not.toContain('"usage"');
    await via.settled();
    expect(await rowsOf(key.keyId)).toMatchObject([{ prompt_tokens: 12, completion_tokens: 4, outcome: "ok" }]);
  });

  it("passes a stream whose client asked for usage through as the upstream sent it", async () => {
    const script = await scriptUpstream([step, step]);
    const key = await newChatKey();
    const via = workerWith();
    const body = {
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: script.marker }],
    };
    const through = await (await chat(key, body, via)).text();
    expect(through).toBe(await direct(body));
    expect(through).toContain('"usage":null');
    await via.settled();
    expect(await rowsOf(key.keyId)).toMatchObject([{ total_tokens: 16, outcome: "ok" }]);
  });

  it("leaves a partial row, with the tokens so far, when the client leaves mid-stream", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "A long answer that takes its time to arrive.", chunkSize: 4, chunkDelayMs: 40 },
    ]);
    const key = await newChatKey();
    const via = workerWith();
    const leave = new AbortController();
    const response = await chat(
      key,
      { model: "m", stream: true, messages: [{ role: "user", content: script.marker }] },
      via,
      leave.signal,
    );
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.read();
    leave.abort();
    await reader?.cancel().catch(() => {});
    await via.settled();
    const [row] = await rowsOf(key.keyId);
    expect(row?.outcome).toBe("partial");
    expect(row?.completion_tokens).toBeGreaterThan(0);
  });

  it("writes a row with the user, route, model, latency and outcome of a passthrough call", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "hi", usage }]);
    const key = await newChatKey();
    const via = workerWith();
    await (await chat(key, { model: "gpt-row", messages: [{ role: "user", content: script.marker }] }, via)).json();
    await via.settled();
    const [row] = await rowsOf(key.keyId);
    expect(row).toMatchObject({
      user_id: "tester",
      session_id: null,
      endpoint: "/v1/chat/completions",
      route: "default",
      model: "gpt-row",
      total_tokens: 16,
      outcome: "ok",
    });
    expect(row?.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it("writes a row for every model call of an agent turn, with its session and mode", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }], usage },
      { type: "completion", content: "Greeted.", usage },
    ]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `greet ${script.marker}`);
    const mine = await sessionRows(sessionId, 2);
    expect(mine.map((r) => [r.endpoint, r.mode, r.route, r.total_tokens, r.outcome])).toEqual([
      ["agent", "general", "default", 16, "ok"],
      ["agent", "general", "default", 16, "ok"],
    ]);
  });

  it("stops a turn whose org budget is spent before its next model call with budget_exceeded, keeping everything", async () => {
    const org = `org-turn-${crypto.randomUUID()}`;
    const key = await newChatKey(org, ["chat", "admin"]);
    const put = await exports.default.fetch("http://aptix.test/admin/budget", {
      method: "PUT",
      headers: { ...authHeaders(key.key), "content-type": "application/json" },
      body: JSON.stringify({ tokensPerDay: 12_000 }),
    });
    expect(put.status).toBe(200);
    const big = { prompt_tokens: 11_000, completion_tokens: 500, total_tokens: 11_500 };
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }], usage: big },
      { type: "completion", content: "never sent" },
    ]);
    const sessionId = await createSession(undefined, key.key);
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { ...authHeaders(key.key), "content-type": "application/json" },
      body: JSON.stringify({ content: `greet ${script.marker}` }),
    });
    const turn = (await response.json()) as { status: string; error?: { code: string }; toolCalls: unknown[] };
    expect([turn.status, turn.error?.code, turn.toolCalls.length]).toEqual(["failed", "budget_exceeded", 1]);
    expect(await script.requests()).toHaveLength(1);
  });

  it("answers /agent/v1 with 429 budget_exceeded before anything is stored when the budget is spent", async () => {
    const org = `org-door-${crypto.randomUUID()}`;
    const key = await newChatKey(org, ["chat", "admin"]);
    await exports.default.fetch("http://aptix.test/admin/budget", {
      method: "PUT",
      headers: { ...authHeaders(key.key), "content-type": "application/json" },
      body: JSON.stringify({ tokensPerDay: 10 }),
    });
    const response = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
      method: "POST",
      headers: { ...authHeaders(key.key), "content-type": "application/json" },
      body: JSON.stringify({ model: "aptix-agent/general", messages: [{ role: "user", content: "hi" }] }),
    });
    const body = (await response.json()) as { error: { code: string } };
    expect([response.status, body.error.code, response.headers.get("x-aptix-session")]).toEqual([
      429,
      "budget_exceeded",
      null,
    ]);
  });
});

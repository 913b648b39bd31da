// Usage rows name the user, however they came: a person signed in by cookie, an MCP client with their OAuth grant.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createBrowserSession, csrfTokenOf } from "../../src/auth/browser-sessions";
import { TEST_KEYS } from "../fixtures/keys";
import { authorizedClient, ORIGIN } from "../fixtures/mcp-oauth";
import { scriptUpstream } from "../fixtures/upstream";

/** The usage rows of a session once the object wrote them (a batch after its reply). */
async function usageOf(sessionId: string): Promise<{ user_id: string; key_id: string }[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare("SELECT user_id, key_id FROM usage_records WHERE session_id = ?")
      .bind(sessionId)
      .all<{ user_id: string; key_id: string }>();
    if (results.length > 0 || Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function mcpCall(token: string, name: string, args: Record<string, unknown>) {
  const response = await exports.default.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  return ((await response.json()) as { result: { structuredContent: Record<string, unknown> } }).result
    .structuredContent;
}

describe("usage rows", () => {
  it("name the person a browser session signed in by single sign-on, and count against them", async () => {
    const { secret } = await createBrowserSession(
      env.DB,
      { org: "org-a", user: "fiona@example.com", scopes: ["chat"], via: "browser_session" },
      { lifetimeMs: 3_600_000, idleMs: 3_600_000 },
    );
    const headers = {
      cookie: `__Host-aptix_session=${secret}`,
      "x-csrf-token": await csrfTokenOf(secret),
      "content-type": "application/json",
    };
    const created = await exports.default.fetch(`${ORIGIN}/context/sessions`, { method: "POST", headers, body: "{}" });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const script = await scriptUpstream([{ type: "completion", content: "hello" }]);
    const turn = await exports.default.fetch(`${ORIGIN}/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers,
      body: JSON.stringify({ content: `hi ${script.marker}` }),
    });
    expect(turn.status).toBe(200);
    expect(await usageOf(sessionId)).toEqual([{ user_id: "fiona@example.com", key_id: "user:fiona@example.com" }]);
  });

  it("name the person whose grant an MCP client used, and count against the grant", async () => {
    const { tokens } = await authorizedClient(TEST_KEYS.chat.key, "Usage Client");
    const started = await mcpCall(tokens.access_token, "start_session", {});
    const sessionId = String(started.sessionId);
    const script = await scriptUpstream([{ type: "completion", content: "hello" }]);
    await mcpCall(tokens.access_token, "send_message", { sessionId, content: `hi ${script.marker}` });
    const rows = await usageOf(sessionId);
    expect(rows.map((r) => r.user_id)).toEqual([TEST_KEYS.chat.user]);
    expect(rows[0]?.key_id).toMatch(/^grant_/);
  });
});

// A session's requests stay within each route's context: the token ratio outlives an eviction, a refusal for length
// that gives the model's count calibrates the route so the next turn fits, each route of the chain is sized by its
// own context, and a request refused before the call is no model call (no usage row, no model_call step).
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import { TurnTimeline } from "../../src/wire/timeline";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, toUpstreamA, toUpstreamB } from "../routing/fixtures";

const ok = { type: "completion", content: "ok" } as const;
const stubOf = (sessionId: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));

/** A session on a route declaring 4,000 tokens, to an upstream of 4,000 counting 2.5 characters a token. */
async function tightSession() {
  const script = await scriptUpstream([ok], undefined, { repeat: true, charsPerToken: 2.5, contextTokens: 4_000 });
  const route = await toUpstreamA({ contextTokens: 4_000 });
  const sessionId = await createSession(await modeOnRoute(route));
  return { script, route, sessionId };
}

describe("a session's requests within its route's context", () => {
  it("keeps its calibration through an eviction, so the next turn does not overshoot the model's context", async () => {
    const { script, route, sessionId } = await tightSession();
    const first = await sendMessage(sessionId, `one ${script.marker} ${"a".repeat(4_400)}`);
    const ratio = await runInDurableObject(stubOf(sessionId), (s: AgentSession) => s.calibration.ratio(route));
    await evictDurableObject(stubOf(sessionId));
    const woken = await runInDurableObject(stubOf(sessionId), (s: AgentSession) => s.calibration.ratio(route));
    const second = await sendMessage(sessionId, `two ${script.marker} ${"b".repeat(4_400)}`);
    expect([first.status, woken, second.status, second.error?.code]).toEqual([
      "completed",
      ratio,
      "completed",
      undefined,
    ]);
    expect(ratio).toBeGreaterThan(1.4);
  });

  it("recovers on the next turn after the model refused a request for length, learning from its count", async () => {
    const { script, sessionId } = await tightSession();
    const refused = await sendMessage(sessionId, `one ${script.marker} ${"a".repeat(8_000)}`);
    const next = await sendMessage(sessionId, `two ${script.marker}`);
    expect([refused.status, refused.error?.code]).toEqual(["failed", "context_length_exceeded"]);
    expect([next.status, next.text]).toEqual(["completed", "ok"]);
  });

  it("sizes the request and its max_tokens for a fallback with a smaller context than the mode's route", async () => {
    const fallback = await toUpstreamB({ contextTokens: 1_500 });
    const route = await toUpstreamA({ contextTokens: 100_000, fallbacks: [fallback] });
    const unavailable = { type: "error", status: 503, body: { error: { message: "overloaded" } } } as const;
    const [a, b] = await Promise.all([
      scriptUpstream([ok, unavailable]),
      scriptUpstream([{ type: "completion", content: "from B" }], env.TEST_UPSTREAM_B_URL, { contextTokens: 1_500 }),
    ]);
    const sessionId = await createSession(await modeOnRoute(route));
    await sendMessage(sessionId, `one ${a.marker} ${"a".repeat(8_000)}`);
    const second = await sendMessage(sessionId, `two ${a.marker} ${b.marker}`);
    const [sent] = (await b.bodies()) as { max_tokens?: number; messages: { content: unknown }[] }[];
    expect([second.status, second.text, sent?.max_tokens]).toEqual(["completed", "from B", 150]);
    expect(JSON.stringify(sent?.messages).includes("a".repeat(8_000))).toBe(false);
  });

  it("records no usage row and no model_call step for a request refused before the call", async () => {
    const script = await scriptUpstream([ok], undefined, { repeat: true });
    const sessionId = await createSession(await modeOnRoute(await toUpstreamA({ contextTokens: 3_000 })));
    const refused = await sendMessage(sessionId, `one ${script.marker} ${"a".repeat(8_000)}`);
    const turnId = (await getSession(sessionId)).turns.at(-1)?.turnId ?? "";
    const response = await exports.default.fetch(
      `http://aptix.test/context/sessions/${sessionId}/turns/${turnId}/timeline`,
      { headers: authHeaders(TEST_KEYS.chat.key) },
    );
    const steps = TurnTimeline.parse(await response.json()).steps.map((s) => s.kind);
    // A call that is sent writes its row; once the next turn's row is there, the refused one would be too.
    const next = await sendMessage(sessionId, `two ${script.marker}`);
    const rows = await usageRows(sessionId, 1);
    expect([refused.status, refused.error?.code, steps.includes("model_call")]).toEqual([
      "failed",
      "context_length_exceeded",
      false,
    ]);
    expect([next.status, rows]).toEqual(["completed", 1]);
    expect(await script.requests()).toHaveLength(1);
  });
});

/** The session's usage rows once at least `atLeast` are written (the object writes them in a batch after its reply). */
async function usageRows(sessionId: string, atLeast: number): Promise<number> {
  for (let tries = 0; ; tries++) {
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_records WHERE session_id = ?")
      .bind(sessionId)
      .first<{ n: number }>();
    if ((row?.n ?? 0) >= atLeast || tries > 60) return row?.n ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

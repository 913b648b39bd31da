// Prompt caching in an agent session, through the real session object: on an anthropic route each step and each
// next turn reads the prefix from the (scripted) Anthropic cache, counted on the turn's usage, its usage rows and its
// timeline; on an openai_compatible route the requests keep a byte-stable prefix and, where the route says,
// carry the session's prompt_cache_key.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { uniqueName } from "../mcp/fixtures";
import { putRoute, toUpstreamA } from "../routing/fixtures";

/** A mode on `route` whose own prompt is long enough for Anthropic's minimum cacheable prefix. */
async function longPromptMode(route: string): Promise<string> {
  const key = uniqueName("cached");
  const { status } = await call(
    "PUT",
    `/admin/modes/${key}`,
    {
      displayName: "Cached mode",
      description: "A mode with a long prompt.",
      systemPrompt: "Work carefully and explain each step. ".repeat(150),
      tools: ["agent_hello_world"],
      modelRoute: route,
    },
    TEST_KEYS.operator.key,
  );
  if (status !== 201 && status !== 200) throw new Error(`mode not written (${status})`);
  return key;
}

/** The cache columns of a session's rows once `count` are written (the object writes them after its reply). */
async function cacheRows(sessionId: string, count: number) {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT cached_input_tokens, cache_write_input_tokens FROM usage_records WHERE session_id = ? ORDER BY created_at",
    )
      .bind(sessionId)
      .all<{ cached_input_tokens: number; cache_write_input_tokens: number }>();
    if (results.length >= count || Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const hello = { type: "tool_use" as const, name: "agent_hello_world", input: { name: "Dana" } };

describe("prompt caching in a session", () => {
  it("reads each step's and the next turn's prefix from Anthropic's cache, on the turn, its rows and its timeline", async () => {
    const route = await putRoute({
      provider: "anthropic",
      model: "claude-session-cache",
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
    });
    const script = await scriptAnthropic([
      { type: "message", content: [hello] },
      { type: "message", content: [{ type: "text", text: "Greeted." }] },
      { type: "message", content: [{ type: "text", text: "Again." }] },
    ]);
    const sessionId = await createSession(await longPromptMode(route));
    const first = await sendMessage(sessionId, `greet ${script.marker}`);
    const second = await sendMessage(sessionId, `again ${script.marker}`);
    expect(first.usage?.cacheWriteInputTokens).toBeGreaterThan(1024);
    // The turn's second step read what its first wrote.
    expect(first.usage?.cachedInputTokens).toBeGreaterThan(1024);
    // The next turn read everything the first turn's requests had sent (and written).
    expect(second.usage?.cachedInputTokens).toBe(first.usage?.cacheWriteInputTokens);
    const rows = await cacheRows(sessionId, 3);
    expect(rows.map((r) => r.cached_input_tokens > 0)).toEqual([false, true, true]);

    const turnId = (await getSession(sessionId)).turns.at(-1)?.turnId ?? "";
    const { json } = await call("GET", `/context/sessions/${sessionId}/turns/${encodeURIComponent(turnId)}/timeline`);
    const steps = (json as { steps: { kind: string; cachedInputTokens?: number }[] }).steps;
    expect(steps.find((s) => s.kind === "model_call")?.cachedInputTokens).toBe(second.usage?.cachedInputTokens);
  });

  it("sends no breakpoint on an anthropic route with promptCaching false", async () => {
    const route = await putRoute({
      provider: "anthropic",
      model: "claude-session-cache",
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
      promptCaching: false,
    });
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "Hi." }] }]);
    await sendMessage(await createSession(await longPromptMode(route)), `hi ${script.marker}`);
    expect((await script.requests())[0]?.body).not.toContain("cache_control");
  });

  it("keeps an OpenAI-compatible request's prefix byte-stable and sends the session's prompt_cache_key", async () => {
    const route = await toUpstreamA({ promptCacheKey: true });
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
      { type: "completion", content: "Greeted." },
      { type: "completion", content: "Again." },
    ]);
    const sessionId = await createSession(await longPromptMode(route));
    await sendMessage(sessionId, `greet ${script.marker}`);
    await sendMessage(sessionId, `again ${script.marker}`);
    const raw = (await script.requests()).map((r) => r.body);
    const bodies = raw.map((b) => JSON.parse(b) as { messages: unknown[]; tools?: unknown; prompt_cache_key?: string });
    // The tools (which OpenAI reads before the messages) are the same bytes in every request.
    expect(new Set(bodies.map((b) => JSON.stringify(b.tools))).size).toBe(1);
    expect(bodies.map((b) => b.prompt_cache_key)).toEqual([sessionId, sessionId, sessionId]);
    // Each request is the one before it with new messages after: the same bytes up to the earlier request's last message.
    for (const [i, body] of raw.entries()) {
      if (i === 0) continue;
      const before = raw[i - 1] ?? "";
      const earlier = bodies[i - 1]?.messages ?? [];
      const prefix = JSON.stringify(earlier).slice(0, -1);
      expect(before).toContain(prefix);
      expect(body).toContain(prefix);
      expect(body.indexOf(prefix)).toBe(before.indexOf(prefix));
      expect(body.slice(0, before.indexOf(prefix))).toBe(before.slice(0, before.indexOf(prefix)));
    }
  });

  it("sends no prompt_cache_key on a route that does not say its server takes it", async () => {
    const route = await toUpstreamA();
    const script = await scriptUpstream([{ type: "completion", content: "Hi." }]);
    await sendMessage(await createSession(await longPromptMode(route)), `hi ${script.marker}`);
    expect((await script.bodies())[0]?.prompt_cache_key).toBeUndefined();
  });
});

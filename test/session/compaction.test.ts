// Compaction: when the earlier turns no longer fit the history budget, the session has the mode's model summarise
// them after a turn (off its reply path), stores the summary with the range it covers, sends it ahead of the kept
// turns, and shows it in the session's view; a compaction that fails leaves the oldest turns out and logs it.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { COMPACTION_INSTRUCTIONS } from "../../src/prompts/compaction-prompt";
import type { AgentSession } from "../../src/session/agent-session";
import type { ConversationSummary } from "../../src/wire/turn";
import { createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, putRoute, toUpstreamA, toUpstreamB } from "../routing/fixtures";
import type { ScriptStep } from "../upstream/script-types";

type Sent = { role: string; content: string | null };

/** A compaction's request: its system message opens as the compaction instructions do (their word limit varies). */
const isCompaction = (body: { messages: Sent[] }) =>
  body.messages[0]?.content?.startsWith(COMPACTION_INSTRUCTIONS.split("\n")[0] ?? "") === true;

const answer = (content: string): ScriptStep => ({ type: "completion", content });
const refusal: ScriptStep = { type: "error", status: 400, body: { error: { message: "summaries refused" } } };
const FILLER = "words ".repeat(700);

const stubOf = (sessionId: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
const compactionIdle = (sessionId: string) =>
  runInDurableObject(stubOf(sessionId), (instance: AgentSession) => instance.compaction.idle());
const storedSummary = (sessionId: string) =>
  runInDurableObject(stubOf(sessionId), (instance: AgentSession) => instance.store.summary());

/**
 * Three turns of long messages (about 1,050 tokens each) in a mode whose route declares a small context (history
 * budget 2,400 tokens): after the second, the first no longer fits under 80% of it. `steps` answer the turns and the compactions, in order.
 */
async function longConversation(steps: ScriptStep[]) {
  const script = await scriptUpstream(steps, undefined, { charsPerToken: 4 });
  const sessionId = await createSession(await modeOnRoute(await toUpstreamA({ contextTokens: 4_000 })));
  const say = (n: number) => sendMessage(sessionId, `turn ${n}: ${script.marker} ${FILLER}`);
  await say(1);
  await say(2);
  await compactionIdle(sessionId);
  const third = await say(3);
  await compactionIdle(sessionId);
  const bodies = (await script.bodies()) as { messages: Sent[] }[];
  const turnThree = bodies.find((b) => b.messages.some((m) => m.content?.startsWith("turn 3:")) && !isCompaction(b));
  return { sessionId, third, bodies, turnThree: turnThree?.messages ?? [] };
}

/** The session's usage rows once `count` are written: the object writes them in a batch after its reply. */
async function usageRows(sessionId: string, count: number): Promise<{ endpoint: string }[]> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { results } = await env.DB.prepare(
      "SELECT endpoint FROM usage_records WHERE session_id = ? ORDER BY created_at, rowid",
    )
      .bind(sessionId)
      .all<{ endpoint: string }>();
    if (results.length >= count || Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Three turns, each answered; the summary after turn 2 (of turn 1), and after turn 3 (of turns 1 and 2). */
const THREE_TURNS_TWO_SUMMARIES = [
  answer("ok 1"),
  answer("ok 2"),
  answer("The user sent turn 1."),
  answer("ok 3"),
  answer("The user sent turns 1 and 2."),
];

const userTurns = (messages: Sent[]) =>
  messages.filter((m) => m.role === "user").map((m) => (m.content ?? "").slice(0, 6));

afterEach(() => {
  vi.restoreAllMocks();
});

/** Two long turns on `route` (context 4,000) and the compaction after the second; the requests' JSON bodies. */
async function twoTurnsAndACompaction(route: string, marker: string) {
  const sessionId = await createSession(await modeOnRoute(route));
  for (const n of [1, 2]) {
    const reply = await sendMessage(sessionId, `turn ${n}: ${marker} ${FILLER}`);
    expect(reply.status).toBe("completed");
  }
  await compactionIdle(sessionId);
  return { sessionId, summary: (await storedSummary(sessionId)) as ConversationSummary | null };
}

const COMPACTION_OPENING = COMPACTION_INSTRUCTIONS.split("\n")[0] ?? "";

describe("compaction's request", () => {
  it("completes turns and a compaction on a model that refuses max_tokens, in the route's max_completion_tokens", async () => {
    const script = await scriptUpstream([answer("ok 1"), answer("ok 2"), answer("The user sent turn 1.")], undefined, {
      charsPerToken: 4,
      refuseMaxTokens: true,
    });
    const route = await toUpstreamA({ contextTokens: 4_000, maxTokensField: "max_completion_tokens" });
    const { summary } = await twoTurnsAndACompaction(route, script.marker);
    expect(summary?.text).toBe("The user sent turn 1.");
    const bodies = await script.bodies();
    expect(bodies.map((b) => [typeof b.max_completion_tokens, "max_tokens" in b])).toEqual([
      ["number", false],
      ["number", false],
      ["number", false],
    ]);
  });

  it("holds a compaction that fails over to a fallback of smaller context to the fallback's own context", async () => {
    const unavailable: ScriptStep = { type: "error", status: 503, body: { error: { message: "overloaded" } } };
    const fallback = await toUpstreamB({ contextTokens: 600 });
    const route = await toUpstreamA({ contextTokens: 4_000, fallbacks: [fallback] });
    const [a, b] = await Promise.all([
      scriptUpstream([answer("ok 1"), answer("ok 2"), unavailable], undefined, { charsPerToken: 4 }),
      scriptUpstream([answer("A summary from B.")], env.TEST_UPSTREAM_B_URL, { charsPerToken: 4 }),
    ]);
    const { summary } = await twoTurnsAndACompaction(route, `${a.marker} ${b.marker}`);
    // The transcript (a turn of some 1,050 tokens) cannot fit B's 600: refused before the call, nothing sent to B.
    expect([summary, await b.bodies()]).toEqual([null, []]);
  });

  it("marks no prompt cache breakpoint on an anthropic route that caches the turns' requests", async () => {
    const script = await scriptAnthropic(
      ["ok 1", "ok 2", "The user sent turn 1."].map((text) => ({
        type: "message" as const,
        content: [{ type: "text" as const, text }],
      })),
      { charsPerToken: 4 },
    );
    const route = await putRoute({
      provider: "anthropic",
      model: "claude-compaction",
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
      contextTokens: 4_000,
    });
    const { summary } = await twoTurnsAndACompaction(route, script.marker);
    expect(summary?.text).toBe("The user sent turn 1.");
    const requests = (await script.requests()).filter((r) => r.path === "/v1/messages");
    expect(requests.map((r) => [r.body.includes(COMPACTION_OPENING), r.body.includes("cache_control")])).toEqual([
      [false, true],
      [false, true],
      [true, false],
    ]);
  });
});

describe("compaction", () => {
  it("stores a summary of the turns that no longer fit, with the range of messages it covers", async () => {
    const { sessionId } = await longConversation(THREE_TURNS_TWO_SUMMARIES);
    const summary = (await storedSummary(sessionId)) as ConversationSummary;
    expect([summary.fromSeq, summary.text]).toEqual([1, "The user sent turns 1 and 2."]);
    const view = await getSession(sessionId);
    const lastOfTurnTwo = view.conversation.filter((m) => m.content === "ok 2")[0]?.seq;
    expect(summary.toSeq).toBe(lastOfTurnTwo);
  });

  it("asks the mode's model with the fixed compaction prompt and the turns to fold in", async () => {
    const { bodies } = await longConversation(THREE_TURNS_TWO_SUMMARIES);
    const compaction = bodies.find(isCompaction);
    const asked = compaction?.messages[1]?.content ?? "";
    expect([asked.includes("User: turn 1:"), asked.includes("Agent: ok 1"), asked.includes("turn 2:")]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("sends the summary ahead of the kept turns in the next request", async () => {
    const { turnThree } = await longConversation(THREE_TURNS_TWO_SUMMARIES);
    expect(turnThree.slice(1, 2)).toEqual([
      { role: "system", content: "Summary of the earlier conversation:\nThe user sent turn 1." },
    ]);
    expect(userTurns(turnThree)).toEqual(["turn 2", "turn 3"]);
  });

  it("shows the summary and the range it covers in the session's view", async () => {
    const { sessionId } = await longConversation(THREE_TURNS_TWO_SUMMARIES);
    const view = await getSession(sessionId);
    expect(view.summary).toMatchObject({ fromSeq: 1, text: "The user sent turns 1 and 2." });
    expect(view.conversation.map((m) => m.content?.slice(0, 6))).toEqual([
      "turn 1",
      "ok 1",
      "turn 2",
      "ok 2",
      "turn 3",
      "ok 3",
    ]);
  });

  it("records the compaction's model call as a usage row of the session, endpoint agent_compaction", async () => {
    const { sessionId } = await longConversation(THREE_TURNS_TWO_SUMMARIES);
    const rows = await usageRows(sessionId, 5);
    expect(rows.map((r) => r.endpoint).sort()).toEqual([
      "agent",
      "agent",
      "agent",
      "agent_compaction",
      "agent_compaction",
    ]);
  });

  it("leaves the oldest turns out and logs it when the compaction fails, and the user's turn still completes", async () => {
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
    const { sessionId, third, turnThree } = await longConversation([
      answer("ok 1"),
      answer("ok 2"),
      refusal,
      answer("ok 3"),
      refusal,
    ]);
    expect([third.status, third.text]).toEqual(["completed", "ok 3"]);
    expect(turnThree.some((m) => m.content?.startsWith("Summary of the earlier conversation:"))).toBe(false);
    expect(userTurns(turnThree)).toEqual(["turn 2", "turn 3"]);
    expect(await storedSummary(sessionId)).toBeNull();
    const logged = warnings.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, string>);
    expect(logged.filter((l) => l.tag === "[AgentSession_Compaction]").map((l) => [l.level, l.SessionId])).toEqual([
      ["Warning", sessionId],
      ["Warning", sessionId],
    ]);
  });
});

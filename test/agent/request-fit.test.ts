// A request never exceeds its route's context: the prompt, tools, history and the answer's reserve (sent as
// max_tokens) fit the route's contextTokens, or the turn fails before any call with context_length_exceeded naming
// what did not fit; a request whose estimate comes near the limit is counted by Anthropic's count_tokens first, and
// the count decides.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { answerReserve } from "../../src/agent/context-budgets";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, putRoute, toUpstreamA } from "../routing/fixtures";

type SentBody = { messages: unknown[]; tools?: unknown[]; max_tokens?: number };

/** The prompt tokens the scripted upstream counts for a body at four characters a token. */
const promptTokens = (body: SentBody) =>
  Math.ceil((JSON.stringify(body.messages).length + (body.tools ? JSON.stringify(body.tools).length : 0)) / 4);

const anthropicRoute = (contextTokens: number) =>
  putRoute({
    provider: "anthropic",
    model: "claude-test",
    baseUrl: env.TEST_ANTHROPIC_URL,
    apiKeySecret: "TEST_ANTHROPIC_API_KEY",
    contextTokens,
  });

/** About 5,700 tokens of message: with the mode's prompt and tools (about 1,100) and the reserve (800), ~95% of 8,000. */
const NEAR_THE_LIMIT = "word ".repeat(4_560);

describe("a request within the route's context", () => {
  it("sends the answer's reserve as max_tokens and keeps prompt, history and reserve within the context", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }], undefined, {
      repeat: true,
      charsPerToken: 4,
    });
    const sessionId = await createSession(await modeOnRoute(await toUpstreamA({ contextTokens: 3_000 })));
    for (const n of [1, 2, 3]) await sendMessage(sessionId, `turn ${n} ${script.marker} ${"words ".repeat(300)}`);
    const bodies = (await script.bodies()) as SentBody[];
    expect(bodies.map((b) => b.max_tokens)).toEqual([300, 300, 300]);
    expect(bodies.every((b) => promptTokens(b) + answerReserve(3_000) <= 3_000)).toBe(true);
  });

  it("fails a turn whose own message cannot fit before any call, with context_length_exceeded naming the parts", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const sessionId = await createSession(await modeOnRoute(await toUpstreamA({ contextTokens: 3_000 })));
    const turn = await sendMessage(sessionId, `${script.marker} ${"far too long ".repeat(2_000)}`);
    expect([turn.status, turn.error?.code]).toEqual(["failed", "context_length_exceeded"]);
    expect(turn.error?.message).toMatch(
      /declares a context of 3000 \(the system prompt \d+, the tools \d+, this turn \d+/,
    );
    expect(turn.error?.message).toContain("This turn's own messages do not fit");
    expect(await script.requests()).toEqual([]);
  });

  it("counts a request near the limit with count_tokens before sending it", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }], {
      charsPerToken: 4,
    });
    const sessionId = await createSession(await modeOnRoute(await anthropicRoute(8_000)));
    const turn = await sendMessage(sessionId, `${script.marker} ${NEAR_THE_LIMIT}`);
    expect(turn.status).toBe("completed");
    expect((await script.requests()).map((r) => r.path)).toEqual(["/v1/messages/count_tokens", "/v1/messages"]);
  });

  it("fails a request near the limit that count_tokens says does not fit, before sending it", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }], {
      charsPerToken: 2,
    });
    const sessionId = await createSession(await modeOnRoute(await anthropicRoute(8_000)));
    const turn = await sendMessage(sessionId, `${script.marker} ${NEAR_THE_LIMIT}`);
    expect([turn.status, turn.error?.code]).toEqual(["failed", "context_length_exceeded"]);
    expect(turn.error?.message).toContain("counted by the model");
    expect((await script.requests()).map((r) => r.path)).toEqual(["/v1/messages/count_tokens"]);
  });
});

// The token estimate is calibrated per route from the usage each answer reports: against upstreams that count at
// 2.5 and at 6 characters a token (ours says 4), the first answer sets the route's ratio, and from the second
// request on the estimate is within 10% of what the upstream reports; the ratio stays within its bounds.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { IMAGE_TOKENS } from "../../src/agent/attachment-content";
import { MAX_TOKEN_RATIO, requestEstimate, TokenCalibration } from "../../src/agent/token-calibration";
import { ModelError } from "../../src/llm/chat-model";
import { refusedPromptTokens } from "../../src/llm/context-refusal";
import type { AgentSession } from "../../src/session/agent-session";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, putRoute, toUpstreamA } from "../routing/fixtures";

const lastReport = (sessionId: string, route: string) =>
  runInDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId)), (instance: AgentSession) =>
    instance.calibration.lastReport(route),
  );

/** Two turns on `route`; the estimate of each request against what the upstream reported for it. */
async function twoTurns(route: string, marker: string) {
  const sessionId = await createSession(await modeOnRoute(route));
  await sendMessage(sessionId, `Tell me about tokens. ${marker}`);
  const first = await lastReport(sessionId, route);
  await sendMessage(sessionId, `And about characters, at some length this time. ${marker}`);
  const second = await lastReport(sessionId, route);
  const off = (r: typeof first) => Math.abs((r?.estimatedTokens ?? 0) / (r?.reportedTokens ?? 1) - 1);
  return { first: off(first), second: off(second) };
}

describe("the token estimate calibrated per route", () => {
  it("is within 10% of an OpenAI-compatible upstream counting 2.5 characters a token after its first answer", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Tokens are pieces of text." }], undefined, {
      repeat: true,
      charsPerToken: 2.5,
    });
    const { first, second } = await twoTurns(await toUpstreamA(), script.marker);
    expect(first).toBeGreaterThan(0.3);
    expect(second).toBeLessThan(0.1);
  });

  it("is within 10% of an Anthropic upstream counting 6 characters a token after its first answer", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "Pieces of text." }] }], {
      repeat: true,
      charsPerToken: 6,
    });
    const route = await putRoute({
      provider: "anthropic",
      model: "claude-test",
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
    });
    const { first, second } = await twoTurns(route, script.marker);
    expect(first).toBeGreaterThan(0.2);
    expect(second).toBeLessThan(0.1);
  });

  it("counts an image part as IMAGE_TOKENS, not by the length of its base64", () => {
    const image = { type: "image_url" as const, image_url: { url: `data:image/png;base64,${"A".repeat(200_000)}` } };
    const estimate = requestEstimate([{ role: "user", content: [{ type: "text", text: "What is this?" }, image] }]);
    expect(estimate).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(estimate).toBeLessThan(IMAGE_TOKENS + 50);
  });

  it("ignores a report far below the previous one for a request no smaller (a server counting only uncached tokens)", () => {
    const calibration = new TokenCalibration();
    calibration.observe("r", 1_000, 1_500);
    calibration.observe("r", 1_100, 200);
    expect([calibration.ratio("r"), calibration.lastReport("r")?.reportedTokens]).toEqual([1.5, 1_500]);
  });

  it("reads the model's count from OpenAI's and Anthropic's refusals for length", () => {
    const refusal = (body: string) => new ModelError("context_length_exceeded", `HTTP 400: ${body}`, 400);
    expect([
      refusedPromptTokens(refusal("However, your messages resulted in 9000 tokens. Please reduce the length")),
      refusedPromptTokens(
        refusal(
          "However, you requested 9500 tokens (8000 in the messages, 500 in the functions, 1000 in the completion).",
        ),
      ),
      refusedPromptTokens(
        refusal('{"type":"error","error":{"message":"prompt is too long: 250000 tokens > 200000 maximum"}}'),
      ),
      refusedPromptTokens(new ModelError("context_length_exceeded", "The request needs about 9000 tokens")),
    ]).toEqual([9_000, 8_500, 250_000, null]);
  });

  it("counts the first request on an Anthropic route declaring a context with count_tokens, before any report", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "Hi." }] }], {
      repeat: true,
      charsPerToken: 3,
    });
    const route = await putRoute({
      provider: "anthropic",
      model: "claude-test",
      baseUrl: env.TEST_ANTHROPIC_URL,
      apiKeySecret: "TEST_ANTHROPIC_API_KEY",
      contextTokens: 100_000,
    });
    const sessionId = await createSession(await modeOnRoute(route));
    await sendMessage(sessionId, `Hello. ${script.marker}`);
    await sendMessage(sessionId, `Again. ${script.marker}`);
    const paths = (await script.requests()).map((r) => r.path);
    expect(paths).toEqual(["/v1/messages/count_tokens", "/v1/messages", "/v1/messages"]);
  });

  it("keeps the ratio within its bounds whatever a model reports", () => {
    const calibration = new TokenCalibration();
    calibration.observe("r", 100, 100_000);
    expect(calibration.ratio("r")).toBe(MAX_TOKEN_RATIO);
    expect(calibration.ratio("another")).toBe(1);
  });
});

// The token estimate is calibrated per route from the usage each answer reports: against upstreams that count at
// 2.5 and at 6 characters a token (ours says 4), the first answer sets the route's ratio, and from the second
// request on the estimate is within 10% of what the upstream reports; the ratio stays within its bounds.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_TOKEN_RATIO, TokenCalibration } from "../../src/agent/token-calibration";
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

  it("keeps the ratio within its bounds whatever a model reports", () => {
    const calibration = new TokenCalibration();
    calibration.observe("r", 100, 100_000);
    expect(calibration.ratio("r")).toBe(MAX_TOKEN_RATIO);
    expect(calibration.ratio("another")).toBe(1);
  });
});

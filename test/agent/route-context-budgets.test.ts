// The history budget of a turn comes from the context length its mode's route declares (contextTokens), and from
// HISTORY_BUDGET_TOKENS when the route declares none.
import { describe, expect, it } from "vitest";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, toUpstreamA } from "../routing/fixtures";

type SentBody = { messages: { role: string; content: string | null }[] };

/** Four turns of long messages in a mode on `route`; the earlier turns' user messages the fourth request carried. */
async function earlierTurnsSent(route: string): Promise<string[]> {
  const script = await scriptUpstream([{ type: "completion", content: "ok" }], undefined, {
    repeat: true,
    charsPerToken: 4,
  });
  const sessionId = await createSession(await modeOnRoute(route));
  const filler = "words ".repeat(700);
  for (const n of [1, 2, 3, 4]) await sendMessage(sessionId, `turn ${n}: ${script.marker} ${filler}`);
  const bodies = (await script.bodies()) as SentBody[];
  const last = bodies.findLast((b) => b.messages.some((m) => m.role === "user" && m.content?.startsWith("turn 4:")));
  return (last?.messages ?? [])
    .filter((m) => m.role === "user" && /^turn [123]:/.test(m.content ?? ""))
    .map((m) => (m.content ?? "").slice(0, 6));
}

describe("context budgets from the model route", () => {
  it("sends fewer earlier turns on a route that declares a small contextTokens than on one that declares none", async () => {
    const small = await earlierTurnsSent(await toUpstreamA({ contextTokens: 4_000 }));
    const unbounded = await earlierTurnsSent(await toUpstreamA());
    expect(unbounded).toEqual(["turn 1", "turn 2", "turn 3"]);
    expect(small.length).toBeLessThan(unbounded.length);
  });
});

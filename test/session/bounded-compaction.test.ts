// Compaction stays bounded (issue 41): a model that echoes its whole input at length (every answer as long as
// max_tokens allows) runs 40 turns on a route declaring 3,000 tokens. Every request it is sent fits the route, the
// stored summary stays within its budget, and compactions run at most once every three turns.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { contextBudgets } from "../../src/agent/context-budgets";
import type { AgentSession } from "../../src/session/agent-session";
import { estimateTokens } from "../../src/token-estimate";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, toUpstreamA } from "../routing/fixtures";

const CONTEXT = 3_000;
const TURNS = 40;

type SentBody = { messages: unknown[]; tools?: unknown[]; max_tokens?: number };

/** What the scripted upstream counts a request at (four characters a token), with the answer it may write. */
const requestTokens = (body: SentBody) =>
  Math.ceil((JSON.stringify(body.messages).length + (body.tools ? JSON.stringify(body.tools).length : 0)) / 4) +
  (body.max_tokens ?? 0);

describe("compaction against a model that echoes at length", () => {
  it("keeps every request within the route, the summary within its budget, and compacts at most every third turn", async () => {
    const script = await scriptUpstream([{ type: "echo" }], undefined, { repeat: true, charsPerToken: 4 });
    const route = await toUpstreamA({ contextTokens: CONTEXT });
    const sessionId = await createSession(await modeOnRoute(route));
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
    const summaryAfterTurn = () =>
      runInDurableObject(stub, async (instance: AgentSession) => {
        await instance.compaction.idle();
        return instance.store.summary();
      });
    const compactedAfter: number[] = [];
    let longest = 0;
    let lastToSeq = 0;
    for (let n = 1; n <= TURNS; n++) {
      const turn = await sendMessage(sessionId, `Message ${n} ${script.marker}: tell me everything again.`);
      expect(turn.status).toBe("completed");
      const summary = await summaryAfterTurn();
      if (summary && summary.toSeq !== lastToSeq) {
        compactedAfter.push(n);
        lastToSeq = summary.toSeq;
        longest = Math.max(longest, estimateTokens(summary.text));
      }
    }
    const bodies = (await script.bodies()) as SentBody[];
    expect(bodies.filter((b) => requestTokens(b) > CONTEXT)).toEqual([]);
    expect(compactedAfter.length).toBeGreaterThan(3);
    const gaps = compactedAfter.slice(1).map((n, i) => n - (compactedAfter[i] ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(3);
    const budget = contextBudgets({ historyBudgetTokens: 0, promptBudgetTokens: 0 }, CONTEXT).summaryBudgetTokens;
    expect(longest).toBeLessThanOrEqual(budget);
    expect(longest).toBeGreaterThan(budget / 2);
  }, 60_000);
});

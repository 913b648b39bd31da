// GET /admin/usage/calls: an admin reads the newest model calls of their own org, an agent call with its session and
// turn (the admin page links it to the turn's timeline); other orgs' calls are never in it, and chat keys are refused.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const Calls = z.object({
  calls: z.array(
    z.object({
      createdAt: z.string(),
      userId: z.string(),
      endpoint: z.string(),
      route: z.string(),
      totalTokens: z.number(),
      outcome: z.string(),
      sessionId: z.string().nullable(),
      turnId: z.string().nullable(),
    }),
  ),
});

const usage = { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 };

/** A session of org-a with one finished turn (bob's message); its id and the turn's. */
async function oneTurn(): Promise<{ sessionId: string; turnId: string }> {
  const script = await scriptUpstream([{ type: "completion", content: "Hi.", usage }]);
  const sessionId = await createSession();
  await sendMessage(sessionId, `hi ${script.marker}`);
  return { sessionId, turnId: (await getSession(sessionId)).turns.at(-1)?.turnId ?? "" };
}

/** The calls `key` reads, once a row of `sessionId` is among them (the object writes its rows just after a turn). */
async function callsOnceWritten(sessionId: string, key: string = TEST_KEYS.admin.key) {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const { status, json } = await call("GET", "/admin/usage/calls?limit=200", undefined, key);
    expect(status).toBe(200);
    const { calls } = Calls.parse(json);
    if (calls.some((c) => c.sessionId === sessionId) || Date.now() > deadline) return calls;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("GET /admin/usage/calls", () => {
  it("answers an agent turn's call with its user, route, tokens, outcome, session and turn", async () => {
    const { sessionId, turnId } = await oneTurn();
    const mine = (await callsOnceWritten(sessionId)).filter((c) => c.sessionId === sessionId);
    expect(mine.map((c) => [c.userId, c.endpoint, c.route, c.totalTokens, c.outcome, c.turnId])).toEqual([
      ["bob", "agent", "default", 16, "ok", turnId],
    ]);
  });

  it("answers the newest calls first", async () => {
    const { sessionId } = await oneTurn();
    const times = (await callsOnceWritten(sessionId)).map((c) => c.createdAt);
    expect(times).toEqual([...times].sort().reverse());
  });

  it("never answers another org's calls", async () => {
    const { sessionId } = await oneTurn();
    await callsOnceWritten(sessionId);
    const theirs = await call("GET", "/admin/usage/calls?limit=200", undefined, TEST_KEYS.otherOrg.key);
    expect(Calls.parse(theirs.json).calls.filter((c) => c.sessionId === sessionId)).toEqual([]);
  });

  it("refuses a key without the admin scope", async () => {
    const { status, json } = await call("GET", "/admin/usage/calls", undefined, TEST_KEYS.chat.key);
    expect([status, (json as ErrorBody).error.code]).toEqual([403, "insufficient_scope"]);
  });

  it("refuses a limit past the most it answers, naming it", async () => {
    const { status, json } = await call("GET", "/admin/usage/calls?limit=201", undefined, TEST_KEYS.admin.key);
    expect([status, (json as ErrorBody).error.param]).toEqual([400, "limit"]);
  });
});

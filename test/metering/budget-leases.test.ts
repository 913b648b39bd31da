// What a session's turns ask of their org's meter (OrgMeter): a lease of budget the session object spends from, its
// settles carried together, so a warm session's turns make at most one request to the meter a turn on average; and
// many sessions of one org spending at once still stop within the budget's bound (docs/admin.md, "How they hold").
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { OrgMeter } from "../../src/metering/org-meter";
import { callAs, createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, type TestKey } from "../passthrough/harness";

/** What each scripted model call reports it used: less than any turn's estimate (its prompt ÷ 4, plus 1024). */
const usage = { prompt_tokens: 300, completion_tokens: 100, total_tokens: 400 };
/** A bigger use, still under the estimate of a turn's first call. */
const spendUsage = { prompt_tokens: 2_500, completion_tokens: 500, total_tokens: 3_000 };
const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };

const meterOf = (org: string) => env.ORG_METER.get(env.ORG_METER.idFromName(org));

/** A key with chat and admin scopes in an org of its own, with a daily token budget of `tokensPerDay`. */
async function budgetedOrg(tokensPerDay: number): Promise<TestKey> {
  const key = await newChatKey(`org-leases-${crypto.randomUUID()}`, ["chat", "admin"]);
  const put = await callAs(key.key, "PUT", "/admin/budget", { tokensPerDay });
  if (put.status !== 200) throw new Error(`budget not set: ${JSON.stringify(put.body)}`);
  return key;
}

/** The requests the org's meter has answered so far. */
function served(org: string): Promise<number> {
  return runInDurableObject(meterOf(org), (meter: OrgMeter) => meter.served);
}

/** The org's tokens spent today and reserved, once its meter has every settle: nothing is reserved any more. */
async function settledUse(org: string): Promise<{ spent: number; reserved: number }> {
  for (;;) {
    const { day, reserved } = await runInDurableObject(meterOf(org), (meter: OrgMeter) =>
      meter.status().then((s) => s.org),
    );
    if (reserved.tokens === 0) return { spent: day.tokens, reserved: reserved.tokens };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function turn(key: TestKey, sessionId: string, content: string) {
  return callAs(key.key, "POST", `/context/sessions/${sessionId}/messages`, { content });
}

/**
 * Requests to the meter a turn, on average, over `turns` turns of `steps` model calls each of a warm session: from
 * the warm turn's answer to the last turn's (the lease the warm turn asked for, and the end of the lease the last
 * turn leaves, are what any run of turns pays once). Every call's use reaches the meter all the same.
 */
async function requestsPerTurn(turns: number, steps: number): Promise<number> {
  const key = await budgetedOrg(100_000_000);
  const step = (last: boolean) =>
    last
      ? { type: "completion" as const, content: "ok", usage }
      : { type: "completion" as const, toolCalls: [hello], usage };
  const script = await scriptUpstream(
    Array.from({ length: (turns + 1) * steps }, (_, i) => step(i % steps === steps - 1)),
  );
  const sessionId = await createSession(undefined, key.key);
  // The first turn wakes the object, reads its mode and takes a lease.
  await turn(key, sessionId, `warm ${script.marker}`);
  const before = await served(key.org);
  for (let i = 0; i < turns; i++) expect((await turn(key, sessionId, `turn ${i} ${script.marker}`)).status).toBe(200);
  const requests = (await served(key.org)) - before;
  expect((await settledUse(key.org)).spent).toBe((turns + 1) * steps * usage.total_tokens);
  return requests / turns;
}

describe("a session's budget lease", () => {
  it("asks the org's meter at most once a turn on average over a warm session's turns of three model calls", async () => {
    expect(await requestsPerTurn(3, 3)).toBeLessThanOrEqual(1);
  });
});

describe("a budget that sessions of one org spend at once", () => {
  it("is never passed by calls that use no more than their estimates, and refuses the calls after it", async () => {
    // Room for ten calls' use, but for only four estimates (a turn's first call reserves about 7000 tokens): the
    // leases the sessions hold at once are what stop most turns, and every lease given back lets the next through.
    const limit = 10 * spendUsage.total_tokens;
    const key = await budgetedOrg(limit);
    const script = await scriptUpstream(
      Array.from({ length: 40 }, () => ({ type: "completion" as const, content: "ok", usage: spendUsage })),
    );
    const sessions = await Promise.all(Array.from({ length: 8 }, () => createSession(undefined, key.key)));
    const statuses = await Promise.all(
      sessions.map(async (sessionId) => {
        const seen: number[] = [];
        for (let i = 0; i < 2; i++) seen.push((await turn(key, sessionId, `spend ${script.marker}`)).status);
        return seen;
      }),
    );
    // Once every lease is back, one session spends what is left until its next turn no longer fits.
    await settledUse(key.org);
    let last = await turn(key, sessions[0] ?? "", `spend ${script.marker}`);
    for (let i = 0; i < 10 && last.status === 200; i++)
      last = await turn(key, sessions[0] ?? "", `spend ${script.marker}`);
    const { spent } = await settledUse(key.org);
    console.log(JSON.stringify(statuses));
    expect(statuses.flat().filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect([spent <= limit, spent > 0, last.status, (last.body.error as { code?: string } | undefined)?.code]).toEqual([
      true,
      true,
      429,
      "budget_exceeded",
    ]);
  });
});

describe("an org without any budget", () => {
  it("sends the settles of many sessions' turns to its meter together, fewer requests than sessions", async () => {
    const key = await newChatKey(`org-unbounded-${crypto.randomUUID()}`, ["chat"]);
    const sessions = 8;
    const script = await scriptUpstream(
      Array.from({ length: sessions + 1 }, () => ({ type: "completion" as const, content: "ok", usage })),
    );
    // The first turn learns from the meter that the org has no limit (its isolate then asks nothing before a call).
    const warm = await createSession(undefined, key.key);
    expect((await turn(key, warm, `warm ${script.marker}`)).status).toBe(200);
    await spentReaches(key.org, usage.total_tokens);
    const before = await served(key.org);

    const ids = await Promise.all(Array.from({ length: sessions }, () => createSession(undefined, key.key)));
    const answers = await Promise.all(ids.map((id, i) => turn(key, id, `turn ${i} ${script.marker}`)));
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 200));
    await spentReaches(key.org, (sessions + 1) * usage.total_tokens);
    expect((await served(key.org)) - before).toBeLessThan(sessions / 2);
  });
});

/** Waits until the org's meter has counted `tokens` spent today (every settle arrived). */
async function spentReaches(org: string, tokens: number): Promise<void> {
  for (;;) {
    const spent = await runInDurableObject(meterOf(org), (meter: OrgMeter) =>
      meter.status().then((s) => s.org.day.tokens),
    );
    if (spent >= tokens) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

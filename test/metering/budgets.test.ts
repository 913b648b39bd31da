// Budgets that hold: one OrgMeter per org reserves an estimate before every model call and settles it with the
// real use, so concurrent calls never spend past a limit; a failed call gives its reservation back; one nobody
// settles lapses. Refusals are 429 budget_exceeded on /v1 and /agent/v1; a turn stopped mid-way keeps everything.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type OrgMeter, RESERVATION_TTL_MS } from "../../src/metering/org-meter";
import { scriptUpstream } from "../fixtures/upstream";
import { BASE_URL, newChatKey, type TestKey, worker, workerWith } from "../passthrough/harness";

/** A key with chat and admin scopes in an org of its own, so its budget is the test's alone. */
const ownOrgKey = () => newChatKey(`org-meter-${crypto.randomUUID()}`, ["chat", "admin"]);

async function admin(key: TestKey, method: string, path: string, body?: unknown, via = worker) {
  const response = await via.fetch(`http://localhost${path}`, {
    method,
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

interface BudgetUse {
  day: { tokens: number };
  reserved: { tokens: number };
}

async function orgBudget(key: TestKey): Promise<BudgetUse> {
  return (await admin(key, "GET", "/admin/budget")).json.budget as BudgetUse;
}

function chat(key: TestKey, body: string, via = worker) {
  return via.fetch(`${BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    body,
  });
}

/**
 * A script of 10 answers whose use is exactly what each request reserves (its body's estimate and max_tokens),
 * so 10 fit a budget of 10 estimates whatever the order; the body every request sends, and that estimate.
 */
async function tenExactCalls(): Promise<{ body: string; estimate: number }> {
  const script = await scriptUpstream([]);
  const body = JSON.stringify({ model: "m", max_tokens: 10, messages: [{ role: "user", content: script.marker }] });
  const estimate = Math.ceil(body.length / 4) + 10;
  await script.append(
    Array.from({ length: 10 }, () => ({
      type: "completion" as const,
      content: "ok",
      usage: { prompt_tokens: estimate - 1, completion_tokens: 1, total_tokens: estimate },
    })),
  );
  return { body, estimate };
}

describe("budgets", () => {
  it("lets exactly the calls that fit through when 50 arrive at once against a budget for 10", async () => {
    const key = await ownOrgKey();
    const { body, estimate } = await tenExactCalls();
    expect((await admin(key, "PUT", "/admin/budget", { tokensPerDay: estimate * 10 })).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const response = await chat(key, body);
        const json = (await response.json()) as { error?: { code: string } };
        return response.status === 200 ? "ok" : (json.error?.code ?? String(response.status));
      }),
    );
    expect([answers.filter((a) => a === "ok").length, answers.filter((a) => a === "budget_exceeded").length]).toEqual([
      10, 40,
    ]);
  });

  it("settles a streamed call with what it used, less than it reserved", async () => {
    const key = await ownOrgKey();
    await admin(key, "PUT", "/admin/budget", { tokensPerDay: 100_000 });
    const script = await scriptUpstream([
      { type: "completion", content: "short", usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } },
    ]);
    const via = workerWith();
    const response = await chat(
      key,
      JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: script.marker }] }),
      via,
    );
    await response.text();
    await via.settled();
    const budget = await orgBudget(key);
    expect([budget.day.tokens, budget.reserved.tokens]).toEqual([9, 0]);
  });

  it("gives back the reservation of a call that failed, spending nothing", async () => {
    const key = await ownOrgKey();
    await admin(key, "PUT", "/admin/budget", { tokensPerDay: 100_000 });
    const via = workerWith({ LLM_BASE_URL: "http://127.0.0.1:9/v1" });
    const response = await chat(key, JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }), via);
    expect(response.status).toBe(502);
    await via.settled();
    const budget = await orgBudget(key);
    expect([budget.day.tokens, budget.reserved.tokens]).toEqual([0, 0]);
  });

  it("lets a reservation nobody settles (a crashed isolate) lapse after its time", async () => {
    const stub = env.ORG_METER.get(env.ORG_METER.idFromName(`org-lapse-${crypto.randomUUID()}`));
    const reserved = await runInDurableObject(stub, async (meter: OrgMeter) => {
      await meter.setLimits(null, { tokensPerDay: 100, tokensPerMonth: null, costPerMonthUsd: null });
      const now = Date.UTC(2026, 10, 23, 12);
      await meter.reserve("k1", { tokens: 80, costMicros: 0 }, now);
      const refused = await meter.reserve("k1", { tokens: 80, costMicros: 0 }, now + 1_000);
      const later = await meter.reserve("k1", { tokens: 80, costMicros: 0 }, now + RESERVATION_TTL_MS + 1);
      return [refused.ok, later.ok];
    });
    expect(reserved).toEqual([false, true]);
  });

  it("holds a key's own budget beside its org's, naming which one refused", async () => {
    const key = await ownOrgKey();
    const limited = await admin(key, "POST", "/admin/keys", { name: "tight", budget: { tokensPerDay: 5 } });
    const secret = (limited.json as { secret: string }).secret;
    const response = await chat(
      { ...key, key: secret },
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    );
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error.code, response.headers.get("retry-after") !== null]).toEqual([
      429,
      "budget_exceeded",
      true,
    ]);
    expect(body.error.message).toMatch(/^The budget of this API key is spent: 0 of 5 tokens per day used or reserved/);
  });

  it("holds the budget with leases too: an isolate spends from a lease for several calls, 10 of 50 still pass", async () => {
    const key = await ownOrgKey();
    const via = workerWith({ METER_LEASE_CALLS: "8" });
    const { body, estimate } = await tenExactCalls();
    await admin(key, "PUT", "/admin/budget", { tokensPerDay: estimate * 10 });
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const response = await chat(key, body, via);
        await response.arrayBuffer();
        return response.status;
      }),
    );
    await via.settled();
    expect([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 429).length]).toEqual([10, 40]);
    const budget = await orgBudget(key);
    expect([budget.day.tokens, budget.reserved.tokens]).toEqual([estimate * 10, 0]);
  });
});

// What an isolate keeps between requests is dropped by forgetIsolateState, as a new isolate starts with none of
// it: the test files, which share one isolate, each start so (test/setup/apply-migrations.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetIsolateState } from "../src/isolate-cache";
import { recordUsage, type UsageRecord } from "../src/metering/usage-records";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const row: UsageRecord = {
  org: "org-isolate",
  keyId: "k1",
  userId: "u1",
  sessionId: null,
  mode: null,
  endpoint: "/chat/completions",
  route: "default",
  model: "m",
  promptTokens: 1,
  completionTokens: 1,
  totalTokens: 2,
  latencyMs: 1,
  outcome: "ok",
  costMicros: 0,
};

async function rowsOf(org: string): Promise<number> {
  const counted = await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_records WHERE org = ?").bind(org).first();
  return Number(counted?.n ?? 0);
}

describe("forgetIsolateState", () => {
  it("drops the usage rows still waiting for their batch's write: none of them lands afterwards", async () => {
    void recordUsage(env.DB, row);
    forgetIsolateState();
    await sleep(250);
    expect(await rowsOf("org-isolate")).toBe(0);
  });

  it("leaves a batch opened afterwards to be written as ever", async () => {
    forgetIsolateState();
    await recordUsage(env.DB, { ...row, org: "org-isolate-after" });
    expect(await rowsOf("org-isolate-after")).toBe(1);
  });
});

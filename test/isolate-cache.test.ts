// What an isolate keeps between requests is dropped by forgetIsolateState, as a new isolate starts with none of
// it: the test files, which share one isolate, each start so (test/setup/apply-migrations.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ExpiringMap, forgetIsolateState } from "../src/isolate-cache";
import { recordUsage } from "../src/metering/usage-records";
import { usageRecord } from "./fixtures/usage-record";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const row = usageRecord({ org: "org-isolate" });

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

describe("ExpiringMap", () => {
  it("forgets an entry at its own time", () => {
    const map = new ExpiringMap<string, number>(10);
    map.set("a", 1, 1_000);
    expect([map.get("a", 999), map.get("a", 1_000)]).toEqual([1, undefined]);
  });

  it("lets the oldest entry go when it holds as many as it may", () => {
    const map = new ExpiringMap<string, number>(2);
    map.set("a", 1, 10_000);
    map.set("b", 2, 10_000);
    map.set("c", 3, 10_000);
    expect([map.get("a", 0), map.get("b", 0), map.get("c", 0)]).toEqual([undefined, 2, 3]);
  });

  it("is emptied by forgetIsolateState", () => {
    const map = new ExpiringMap<string, number>(10);
    map.set("a", 1, Date.now() + 60_000);
    forgetIsolateState();
    expect(map.get("a")).toBeUndefined();
  });
});

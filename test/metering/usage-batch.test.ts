// The isolate's usage batch across requests: the request that opens it waits for its write (and hears of its
// failure); one that joins it is given nothing to wait for, its row written by the opener's batch all the same.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WORKER } from "../../src/metering/meter";
import { type MeterContext, recordModelCall } from "../../src/metering/model-call-meter";
import { recordUsage, type UsageRecord } from "../../src/metering/usage-records";
import { defaultRoute, defaultRouteSource } from "../../src/routing/model-routes";
import { settings } from "../../src/settings";
import { refuseD1Batches } from "../fixtures/d1-spy";
import { RecordingAdminLogger } from "../fixtures/recording-logger";

const record = (org: string, keyId: string): UsageRecord => ({
  org,
  keyId,
  userId: "u1",
  sessionId: null,
  mode: null,
  turnId: null,
  endpoint: "/chat/completions",
  route: "default",
  model: "m",
  promptTokens: 1,
  completionTokens: 1,
  totalTokens: 2,
  latencyMs: 1,
  outcome: "ok",
  costMicros: 0,
});

async function keysOf(org: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT key_id FROM usage_records WHERE org = ? ORDER BY key_id")
    .bind(org)
    .all<{ key_id: string }>();
  return results.map((row) => row.key_id);
}

describe("the isolate's usage batch", () => {
  it("gives the request that opens it the write to wait for, and one that joins it nothing", async () => {
    const org = "org-batch-join";
    const opened = recordUsage(env.DB, record(org, "k1"), WORKER);
    const joined = recordUsage(env.DB, record(org, "k2"), WORKER);
    expect([opened instanceof Promise, joined]).toEqual([true, null]);
    await opened;
    expect(await keysOf(org)).toEqual(["k1", "k2"]);
  });

  it("logs a failed write once, from the call that opened the batch", async () => {
    const logger = new RecordingAdminLogger();
    const context: MeterContext = { env, logger, defer: () => {}, owner: WORKER };
    const route = defaultRoute(defaultRouteSource(env, settings(env)));
    const caller = { org: "org-batch-refused", keyId: "k", user: "u1" };
    const place = { sessionId: null, mode: null, turnId: null, endpoint: "/chat/completions" };
    const call = { route, model: "m", usage: null, latencyMs: 1, outcome: "ok" as const };
    const { refused } = await refuseD1Batches(
      (sql) => sql.some((statement) => statement.startsWith("INSERT INTO usage_records")),
      () => Promise.all([1, 2, 3].map(() => recordModelCall(context, caller, place, call, "[usage_test]"))),
    );
    expect(refused).toHaveLength(1);
    expect(logger.exceptions.map((exception) => exception.tag)).toEqual(["[usage_test]"]);
  });
});

// The usage rows a batch writes go to D1 as one statement, whatever their number (usageInserts: a JSON array spread
// by json_each), and come back exactly as they were written: text, nulls, numbers, the model name cut to 256.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type MeterContext, recordModelCall } from "../../src/metering/model-call-meter";
import { recordUsage, UsageRowsNotWritten, usageInserts, usageRow } from "../../src/metering/usage-records";
import { defaultRoute } from "../../src/routing/model-routes";
import { parseSettings } from "../../src/settings";
import { refuseD1Batches, spyOnD1 } from "../fixtures/d1-spy";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { usageRecord } from "../fixtures/usage-record";

const base = usageRecord({
  org: "org-one-statement",
  promptTokens: 10,
  completionTokens: 5,
  totalTokens: 15,
  latencyMs: 12.6,
});

interface StoredRow {
  id: string;
  key_id: string;
  session_id: string | null;
  mode: string | null;
  turn_id: string | null;
  mode_version: number | null;
  model: string;
  prompt_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  latency_ms: number;
  outcome: string;
  cost_micros: number;
}

async function rowsOf(org: string): Promise<StoredRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT id, key_id, session_id, mode, turn_id, mode_version, model, prompt_tokens, cached_input_tokens,
       cache_write_input_tokens, latency_ms, outcome, cost_micros
     FROM usage_records WHERE org = ? ORDER BY key_id`,
  )
    .bind(org)
    .all<StoredRow>();
  return results;
}

describe("usage rows written together", () => {
  it("writes a batch's rows in one D1 statement", async () => {
    const org = "org-one-statement-batch";
    const { calls } = await spyOnD1(() =>
      Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => recordUsage(env.DB, { ...base, org, keyId: `k${n}` }))),
    );
    const writes = calls.filter((call) => call.sql.some((sql) => sql.startsWith("INSERT INTO usage_records")));
    expect(writes.map((call) => call.sql.length)).toEqual([1]);
    expect((await rowsOf(org)).map((row) => row.key_id)).toEqual(["k1", "k2", "k3", "k4", "k5", "k6", "k7"]);
  });

  it("stores each value as it was given: text, nulls and numbers, the model name cut to 256 characters", async () => {
    const org = "org-one-statement-values";
    const agent = usageRow({
      ...base,
      org,
      keyId: "a",
      sessionId: "s-1",
      mode: "chat",
      turnId: "t-1",
      modeVersion: 3,
      model: `modèle "quoted" \\ ${"x".repeat(300)}`,
      cachedInputTokens: 4,
      cacheWriteInputTokens: 2,
      outcome: "partial",
      costMicros: 1234,
    });
    const passthrough = usageRow({ ...base, org, keyId: "b" });
    await env.DB.batch(usageInserts(env.DB, [agent, passthrough]));
    const [a, b] = await rowsOf(org);
    expect(a).toEqual({
      id: agent.id,
      key_id: "a",
      session_id: "s-1",
      mode: "chat",
      turn_id: "t-1",
      mode_version: 3,
      model: agent.model.slice(0, 256),
      prompt_tokens: 10,
      cached_input_tokens: 4,
      cache_write_input_tokens: 2,
      latency_ms: 13,
      outcome: "partial",
      cost_micros: 1234,
    });
    expect(b).toEqual({
      id: passthrough.id,
      key_id: "b",
      session_id: null,
      mode: null,
      turn_id: null,
      mode_version: null,
      model: "m",
      prompt_tokens: 10,
      cached_input_tokens: 0,
      cache_write_input_tokens: 0,
      latency_ms: 13,
      outcome: "ok",
      cost_micros: 0,
    });
  });

  it("stores a row sent twice once", async () => {
    const org = "org-one-statement-twice";
    const row = usageRow({ ...base, org });
    await env.DB.batch(usageInserts(env.DB, [row]));
    await env.DB.batch(usageInserts(env.DB, [row, usageRow({ ...base, org, keyId: "k2" })]));
    expect((await rowsOf(org)).map((stored) => stored.key_id)).toEqual(["k1", "k2"]);
  });

  it("writes a batch D1 refused once at its next try, each row once", async () => {
    const org = "org-one-statement-retried";
    let refusals = 0;
    const { refused } = await refuseD1Batches(
      (sql) => sql.some((statement) => statement.startsWith("INSERT INTO usage_records")) && refusals++ === 0,
      () => Promise.all([1, 2].map((n) => recordUsage(env.DB, { ...base, org, keyId: `k${n}` }))),
    );
    expect(refused).toHaveLength(1);
    expect((await rowsOf(org)).map((row) => row.key_id)).toEqual(["k1", "k2"]);
  });

  it("logs a batch D1 refuses for good once, naming how many rows it held, whichever request of it hears first", async () => {
    const org = "org-one-statement-lost";
    const loggers = [1, 2, 3].map(() => new RecordingAdminLogger());
    const route = defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null });
    const owner = {};
    // A constraint's refusal is final (not tried again), so the batch fails at its first try.
    await refuseD1Batches(
      (sql) => sql.some((statement) => statement.startsWith("INSERT INTO usage_records")),
      () =>
        Promise.all(
          loggers.map((logger, n) => {
            const context: MeterContext = { env, logger, defer: () => {}, owner };
            return recordModelCall(
              context,
              { org, keyId: `k${n}`, user: "u" },
              { sessionId: null, mode: null, turnId: null, endpoint: "/v1/chat/completions" },
              { route, model: "m", usage: null, latencyMs: 5, outcome: "ok" },
              "[passthrough_usage]",
            );
          }),
        ),
      "D1_ERROR: SQLITE_CONSTRAINT: refused by the test",
    );
    const logged = loggers.flatMap((logger) => logger.exceptions);
    expect(logged).toHaveLength(1);
    const [only] = logged;
    expect(only?.tag).toBe("[passthrough_usage]");
    expect(only?.error).toBeInstanceOf(UsageRowsNotWritten);
    expect(only?.error instanceof Error ? only.error.message : null).toBe(
      "3 usage rows not written: D1_ERROR: SQLITE_CONSTRAINT: refused by the test",
    );
    expect(await rowsOf(org)).toEqual([]);
  });
});

// npm run bench:ops's counting bindings (src/observability/op-counts.ts), on the real ones of the Workers runtime:
// D1, a Durable Object's RPC, KV, the rate limiter and a queue. (Here, not in test/observability/: that folder is the
// `traced` project's, which exports to an OTLP receiver these tests do not need.)
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { countedEnv, opCounts, resetOpCounts } from "../../src/observability/op-counts";

/** The test env as the bench runs the Worker: with APTIX_COUNT_OPS=1. */
const counting = () => countedEnv({ ...env, APTIX_COUNT_OPS: "1" });

beforeEach(() => resetOpCounts());

describe("countedEnv", () => {
  it("is the env itself without APTIX_COUNT_OPS, and counts nothing", async () => {
    expect(countedEnv(env)).toBe(env);
    await countedEnv(env).DB.prepare("SELECT 1 AS one").all();
    expect(opCounts().d1Queries).toBe(0);
  });

  it("hands every env the same wrapper of a binding, as the runtime hands them the same binding", () => {
    expect(counting().DB).toBe(counting().DB);
    expect(counting().DB).not.toBe(env.DB);
  });

  it("counts a D1 batch as one round trip of its statements, with the rows its meta reports", async () => {
    const db = counting().DB;
    await db.prepare("CREATE TABLE IF NOT EXISTS ops_counted (id INTEGER PRIMARY KEY, name TEXT)").run();
    resetOpCounts();
    const results = await db.batch([
      db.prepare("INSERT INTO ops_counted (name) VALUES (?)").bind("a"),
      db.prepare("INSERT INTO ops_counted (name) VALUES (?)").bind("b"),
    ]);
    const written = results.reduce((sum, r) => sum + r.meta.rows_written, 0);
    expect(written).toBeGreaterThan(0);
    expect(opCounts()).toMatchObject({
      d1Batches: 1,
      d1RoundTrips: 1,
      d1WriteRoundTrips: 1,
      d1Queries: 2,
      d1RowsWritten: written,
    });
    expect(opCounts().d1ByStatement["INSERT INTO ops_counted (name) VALUES (?)"]).toEqual({
      queries: 2,
      rowsRead: results.reduce((sum, r) => sum + r.meta.rows_read, 0),
      rowsWritten: written,
    });
  });

  it("counts first() with its rows read, and answers as D1's first() does", async () => {
    const db = counting().DB;
    await db.prepare("CREATE TABLE IF NOT EXISTS ops_first (id INTEGER PRIMARY KEY, name TEXT)").run();
    await db.prepare("INSERT INTO ops_first (name) VALUES ('x'), ('y')").run();
    resetOpCounts();
    const query = "SELECT name FROM ops_first ORDER BY id";
    expect(await db.prepare(query).first()).toEqual(await env.DB.prepare(query).first());
    expect(await db.prepare(query).first("name")).toBe("x");
    await expect(db.prepare(query).first("nope")).rejects.toThrow("D1_COLUMN_NOTFOUND");
    const counts = opCounts();
    expect(counts).toMatchObject({ d1Queries: 3, d1RoundTrips: 3, d1WriteRoundTrips: 0, d1Batches: 0 });
    expect(counts.d1RowsRead).toBeGreaterThanOrEqual(6);
  });

  it("counts a session's queries (withSession) as the database's", async () => {
    await counting().DB.withSession("first-primary").prepare("SELECT 1 AS one").all();
    expect(opCounts()).toMatchObject({ d1Queries: 1, d1RoundTrips: 1 });
  });

  it("counts a Durable Object's RPC call by its binding, and not the id or the stub", async () => {
    const meters = counting().ORG_METER;
    const stub = meters.get(meters.idFromName(`org-ops-${crypto.randomUUID()}`));
    expect(opCounts().doRequests).toBe(0);
    const status = await stub.status();
    expect(status.org.reserved.tokens).toBe(0);
    expect(opCounts()).toMatchObject({ doRequests: 1, doRequestsByBinding: { ORG_METER: 1 } });
  });

  it("counts KV reads and writes, a key each", async () => {
    const kv = counting().OAUTH_KV;
    await kv.put("ops-counted", "1");
    expect(await kv.get("ops-counted")).toBe("1");
    await kv.delete("ops-counted");
    expect(opCounts()).toMatchObject({ kvReads: 1, kvWrites: 2, kvLists: 0 });
  });

  it("counts each rate limiter call", async () => {
    const outcome = await counting().MODEL_CALL_LIMITER.limit({ key: `ops-${crypto.randomUUID()}` });
    expect(outcome.success).toBe(true);
    expect(opCounts().rateLimiterCalls).toBe(1);
  });

  it("counts queue messages: one a send, each of a sendBatch", async () => {
    // An event of an org no endpoint subscribes to: the consumer reads it and delivers nothing.
    const body = {
      kind: "event",
      id: `evt_${crypto.randomUUID()}`,
      at: new Date().toISOString(),
      event: { type: "turn.completed", org: "org-ops-none", user: null, sessionId: null, data: {} },
    };
    const queue = counting().WEBHOOK_QUEUE;
    await queue.send(body);
    await queue.sendBatch([{ body }, { body }]);
    expect(opCounts().queueMessages).toBe(3);
  });
});

// A turn's usage rows are never lost: kept in the session object's storage before the turn's reply goes out, written
// to D1 with the list entry's batch, and, should the object stop before that batch, written from the next instance's
// alarm; a row D1 has already is stored once however often it is sent.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { usageInserts } from "../../src/metering/usage-records";
import type { AgentSession } from "../../src/session/agent-session";
import { call, createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const stubOf = (id: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
const inObject = <T>(id: string, work: (instance: AgentSession, state: DurableObjectState) => T | Promise<T>) =>
  runInDurableObject(stubOf(id), work);

/** Longer than any test: the list write it delays never comes while the test looks. */
const HELD_MS = 600_000;

/** A session whose turn answered while its list writes were held back: its usage row kept, not yet in D1. */
async function turnWithListWriteHeld(): Promise<{ id: string; keptIds: string[]; turnId: string }> {
  const script = await scriptUpstream([
    { type: "completion", content: "Done.", usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
  ]);
  const id = await createSession();
  await inObject(id, (instance) => {
    instance.list.delays.running = HELD_MS;
    instance.list.delays.changed = HELD_MS;
    instance.list.delays.checking = HELD_MS;
  });
  await sendMessage(id, script.marker);
  const { keptIds, turnId } = await inObject(id, (instance) => ({
    keptIds: instance.usage.kept().map((row) => row.id),
    turnId: instance.store.turns().at(-1)?.turnId ?? "",
  }));
  return { id, keptIds, turnId };
}

/** The session's usage rows in D1: id, turn and tokens. */
async function storedRows(id: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, turn_id, total_tokens FROM usage_records WHERE session_id = ? ORDER BY created_at",
  )
    .bind(id)
    .all<{ id: string; turn_id: string; total_tokens: number }>();
  return results;
}

describe("a session's usage rows kept until D1 has them", () => {
  it("writes the row of a turn whose object stopped before its list write, from the next instance's alarm, once", async () => {
    const { id, keptIds, turnId } = await turnWithListWriteHeld();
    const before = await storedRows(id);
    await inObject(id, (_instance, state) => state.abort("stopped by the test")).catch(() => undefined);

    // The new instance wants its alarm at once for what the old one kept; run it, should it not have run by itself.
    await runDurableObjectAlarm(stubOf(id));
    const left = await inObject(id, async (instance) => {
      await instance.list.settled();
      return instance.usage.kept();
    });
    expect([before, keptIds.length]).toEqual([[], 1]);
    expect(await storedRows(id)).toEqual([{ id: keptIds[0], turn_id: turnId, total_tokens: 11 }]);
    expect(left).toEqual([]);
  });

  it("stores a kept row once when D1 had it already (its batch landed, the object did not see it end)", async () => {
    const id = await createSession();
    const kept = await inObject(id, (instance) => {
      instance.usage.keep({
        org: "org-a",
        keyId: "chat",
        userId: "bob",
        sessionId: id,
        mode: "general",
        turnId: "turn-resent",
        endpoint: "agent",
        route: "default",
        model: "scripted-model",
        promptTokens: 3,
        completionTokens: 4,
        totalTokens: 7,
        latencyMs: 12,
        outcome: "ok",
        costMicros: 0,
      });
      return instance.usage.kept();
    });
    await env.DB.batch(usageInserts(env.DB, kept));
    const left = await inObject(id, async (instance) => {
      await instance.list.flush();
      return instance.usage.kept();
    });
    expect(await storedRows(id)).toEqual([{ id: kept[0]?.id, turn_id: "turn-resent", total_tokens: 7 }]);
    expect(left).toEqual([]);
  });

  it("writes the kept rows of a session deleted before its list write", async () => {
    const { id, keptIds } = await turnWithListWriteHeld();
    const deleted = await call("DELETE", `/context/sessions/${id}`);
    expect([deleted.status, (await storedRows(id)).map((row) => row.id)]).toEqual([200, keptIds]);
  });
});

// A turn's stop event reaches the webhook queue only when an endpoint hears it (issue 46): the session's list write
// asks D1, in the batch it makes after the turn anyway, and an event no one hears is forgotten unsent. Should that
// batch fail, the event is sent as before (the consumer decides), so a check never loses a delivery. No endpoint is
// made in this file: org-a has none.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { EventMessage } from "../../src/webhooks/events";
import { refuseD1Batches } from "../fixtures/d1-spy";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const inObject = <T>(id: string, work: (instance: AgentSession, state: DurableObjectState) => T | Promise<T>) =>
  runInDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id)), work);

/** Longer than any test: a write waiting this long never comes while the test looks. */
const HELD_MS = 600_000;

/** A new session whose object's sends go to the returned list. */
async function recordedSession(): Promise<{ id: string; sent: EventMessage[] }> {
  const id = await createSession();
  const sent: EventMessage[] = [];
  await inObject(id, (instance) => {
    instance.outbox.send = async (message) => {
      sent.push(message);
    };
  });
  return { id, sent };
}

/** What the object keeps once its list writes are done. */
const keptOnceWritten = (id: string) =>
  inObject(id, async (instance) => {
    await instance.list.settled();
    return instance.outbox.kept();
  });

const checksTheEndpoints = (sql: string[]) => sql.some((statement) => /\bFROM webhook_endpoints\b/.test(statement));

describe("a turn's stop event checked against the org's endpoints", () => {
  it("sends nothing to the queue for a turn in an org with no endpoint, and keeps no event", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Done." }]);
    const { id, sent } = await recordedSession();
    const answer = await sendMessage(id, script.marker);
    const kept = await keptOnceWritten(id);
    expect([answer.status, sent, kept]).toEqual(["completed", [], []]);
  });

  it("checks a stop's event in a write that does not wait the list's usual delay", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Done." }]);
    const { id, sent } = await recordedSession();
    await inObject(id, (instance) => {
      instance.list.delays.running = HELD_MS;
      instance.list.delays.changed = HELD_MS;
    });
    await sendMessage(id, script.marker);
    for (;;) {
      const kept = await inObject(id, (instance) => instance.outbox.kept());
      if (kept.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(sent).toEqual([]);
  });

  it("sends the stop event when the list write's batch that checked it fails, and keeps it no longer", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Done." }]);
    const { id, sent } = await recordedSession();
    const { result: kept, refused } = await refuseD1Batches(checksTheEndpoints, async () => {
      await sendMessage(id, script.marker);
      return keptOnceWritten(id);
    });
    const [batch, ...more] = refused;
    const check = batch?.params[batch.sql.findIndex((sql) => checksTheEndpoints([sql]))];
    const [event] = sent;
    expect([more, sent.length, kept]).toEqual([[], 1, []]);
    expect([event?.event.type, event?.event.sessionId]).toEqual(["turn.completed", id]);
    // The refused batch asked about this event: org, its time, its user, its type, its turn.
    expect(check).toEqual(["org-a", event?.at, "bob", "turn.completed", event?.event.data.turnId]);
  });
});

// A turn's stop event is sent at least once: it is kept in the session object's storage in the step that stores the
// stop, and sent again, the same message with the same event id, when the queue refused it or the object stopped
// before sending it (the object's alarm sends what is kept); the queue's consumer delivers an event sent twice once.
// An endpoint of the org hears turn.completed, so a turn's event is sent (one no one hears is not: turn-event-check).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { EventMessage } from "../../src/webhooks/events";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { ADMIN, consume, createEndpoint, eventMessage, received, receiverUrl } from "../webhooks/fixtures";

const stubOf = (id: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));

const inObject = <T>(id: string, work: (instance: AgentSession, state: DurableObjectState) => T) =>
  runInDurableObject(stubOf(id), work);

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A session whose turn has completed while the object's sends went to `send`. */
async function completedTurn(send: (message: EventMessage) => Promise<void>): Promise<string> {
  const script = await scriptUpstream([{ type: "completion", content: "Done." }]);
  const id = await createSession();
  await inObject(id, (instance) => {
    instance.outbox.send = send;
  });
  await sendMessage(id, script.marker);
  return id;
}

/** Records what the object sends from now on. */
async function recordSends(id: string): Promise<EventMessage[]> {
  const sent: EventMessage[] = [];
  await inObject(id, (instance) => {
    instance.outbox.send = async (message) => {
      sent.push(message);
    };
  });
  return sent;
}

describe("turn events kept until the queue has them", () => {
  beforeAll(async () => {
    await createEndpoint(ADMIN, receiverUrl("outbox").url, ["turn.completed"]);
  });

  it("sends an event the queue refused again from the alarm, with the same event id, then forgets it", async () => {
    const refused: string[] = [];
    const id = await completedTurn(async (message) => {
      refused.push(message.id);
      throw new Error("the queue is unavailable");
    });
    const due = await until(
      () => inObject(id, (instance) => instance.outbox.dueAt()),
      (at) => at !== null,
    );
    const { kept, alarm } = await inObject(id, async (instance, state) => ({
      kept: instance.outbox.kept().map((m) => m.id),
      alarm: await state.storage.getAlarm(),
    }));
    expect([kept, alarm]).toEqual([refused, due]);

    const sent = await recordSends(id);
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect(sent.map((m) => [m.id, m.event.type, m.event.data.summary])).toEqual([
      [refused[0], "turn.completed", "Done."],
    ]);
    expect(await inObject(id, (instance) => [instance.outbox.kept(), instance.outbox.dueAt()])).toEqual([[], null]);
  });

  it("sends the event an object stopped before sending from the next instance's alarm, with the same id", async () => {
    const held: EventMessage[] = [];
    // The send never answers: the object is stopped with the event kept but not sent.
    const id = await completedTurn((message) => {
      held.push(message);
      return new Promise<void>(() => undefined);
    });
    await until(
      async () => held.length,
      (count) => count === 1,
    );
    await inObject(id, (_instance, state) => state.abort("restarted by the test")).catch(() => undefined);

    const sent = await recordSends(id);
    // The new instance set its alarm for now; run it here, should it not have run by itself yet.
    await runDurableObjectAlarm(stubOf(id));
    await until(
      async () => sent.length,
      (count) => count >= 1,
    );
    expect(sent).toEqual(held);
    expect(await inObject(id, (instance) => instance.outbox.kept())).toEqual([]);
  });

  it("delivers an event whose message came twice (sent again by the outbox) once to each endpoint", async () => {
    const target = receiverUrl("resent");
    await createEndpoint(ADMIN, target.url, ["turn.paused"]);
    const turnId = `turn-${crypto.randomUUID()}`;
    const message = eventMessage({ type: "turn.paused", org: "org-a", user: null, data: { turnId } });
    await consume(message);
    await consume(message);
    const got = (await received(target.name)).filter((r) => r.body.includes(turnId));
    expect(got.map((r) => r.status)).toEqual([204]);
  });
});

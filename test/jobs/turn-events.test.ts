// Every turn that stops is published (once, when its send succeeds) (turn.completed, turn.failed, turn.paused) with its ids, mode, steps and a
// short summary that holds no secret: read here through the session object's publisher, given a recorder. An endpoint
// of the org hears the three (an event no one hears is not sent: turn-event-check.test.ts).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { WebhookEvent } from "../../src/webhooks/events";
import { approve, createSession, sendMessage } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { ADMIN, createEndpoint, receiverUrl } from "../webhooks/fixtures";

const write = { name: "workspace_write_file", arguments: JSON.stringify({ path: "a.txt", content: "A" }) };

/** A session whose object publishes into the returned list (the object stays in memory for the test). */
async function recordedSession(mode?: string): Promise<{ id: string; events: WebhookEvent[] }> {
  const id = await createSession(mode);
  const events: WebhookEvent[] = [];
  await runInDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id)), (instance: AgentSession) => {
    instance.outbox.send = async (message) => {
      events.push(message.event);
    };
  });
  return { id, events };
}

/** The events once `count` have been published (they are published just after the answer). */
async function published(events: WebhookEvent[], count: number): Promise<WebhookEvent[]> {
  while (events.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
  return events;
}

describe("turn events", () => {
  beforeAll(async () => {
    await createEndpoint(ADMIN, receiverUrl("turn-events").url, ["turn.completed", "turn.failed", "turn.paused"]);
  });

  it("publishes turn.completed once, with the ids, mode, steps and the answer's first 200 characters", async () => {
    const answer = "x".repeat(300);
    const script = await scriptUpstream([{ type: "completion", content: answer }]);
    const { id, events } = await recordedSession();
    await sendMessage(id, script.marker);
    const [event, ...more] = await published(events, 1);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ type: "turn.completed", org: "org-a", user: "bob", sessionId: id });
    expect(event?.data).toEqual({
      sessionId: id,
      turnId: expect.any(String),
      status: "completed",
      mode: "general",
      steps: 1,
      summary: "x".repeat(200),
    });
  });

  it("publishes turn.paused when the turn waits for approval, then turn.completed when it ends", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write] },
      { type: "completion", content: "Skipped." },
    ]);
    const { id, events } = await recordedSession("workspace");
    const paused = await sendMessage(id, `w ${script.marker}`);
    await published(events, 1);
    await approve(id, [{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: false }]);
    const [pause, end] = await published(events, 2);
    expect(events).toHaveLength(2);
    expect([pause?.type, pause?.data.status, pause?.data.waitingFor]).toEqual(["turn.paused", "paused", "approval"]);
    expect([end?.type, end?.data.summary, end?.data.turnId]).toEqual([
      "turn.completed",
      "Skipped.",
      pause?.data.turnId,
    ]);
  });

  it("publishes a paused turn cancelled by a person as turn.failed with status cancelled, for that turn", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const { id, events } = await recordedSession("workspace");
    await sendMessage(id, `w ${script.marker}`);
    const socket = await openSocket(id);
    socket.send({ type: "cancel" });
    const [pause, end] = await published(events, 2);
    socket.close();
    expect([end?.type, end?.data.status, end?.data.errorCode]).toEqual(["turn.failed", "cancelled", "cancelled"]);
    expect(end?.data.turnId).toBe(pause?.data.turnId);
  });

  it("publishes turn.failed with the error's code and message as the summary", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 400, body: { error: { message: "no such thing" } } },
    ]);
    const { id, events } = await recordedSession();
    const failed = await sendMessage(id, script.marker);
    const [event] = await published(events, 1);
    expect(event?.type).toBe("turn.failed");
    expect(event?.data).toMatchObject({ status: "failed", errorCode: failed.error?.code });
    expect(event?.data.summary).toBe(failed.error?.message.slice(0, 200));
  });

  it("never carries a secret in the summary: the Worker's keys are redacted from the answer", async () => {
    const script = await scriptUpstream([{ type: "completion", content: `The key is ${env.LLM_API_KEY}.` }]);
    const { id, events } = await recordedSession();
    await sendMessage(id, script.marker);
    const [event] = await published(events, 1);
    expect(event?.data.summary).toBe("The key is [redacted].");
  });
});

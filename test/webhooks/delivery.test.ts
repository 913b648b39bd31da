// Deliveries through the real queue: an event published (as a turn's end publishes it) and a test event reach the
// endpoint signed, and the official `standardwebhooks` library verifies them with the secret shown at creation.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { publishEvent } from "../../src/webhooks/events";
import { call } from "../fixtures/sessions";
import { ADMIN, createEndpoint, MEMBER, receivedAtLeast, receiverUrl } from "./fixtures";

describe("webhook delivery", () => {
  it("delivers a published turn.completed to the org's endpoint, verified by standardwebhooks", async () => {
    const target = receiverUrl("published");
    const { secret } = await createEndpoint(ADMIN, target.url, ["turn.completed"]);
    const work: Promise<unknown>[] = [];
    publishEvent(
      env,
      {
        type: "turn.completed",
        org: "org-a",
        user: "bob",
        sessionId: "s-9",
        data: { sessionId: "s-9", turnId: "t-9", status: "completed", mode: "general" },
      },
      (promise) => work.push(promise),
    );
    await Promise.all(work);
    const [delivery] = await receivedAtLeast(target.name, 1);
    const verified = new Webhook(secret).verify(delivery?.body ?? "", delivery?.headers ?? {});
    expect(verified).toEqual({
      type: "turn.completed",
      timestamp: expect.any(String),
      data: { sessionId: "s-9", turnId: "t-9", status: "completed", mode: "general" },
    });
    expect(delivery?.headers["webhook-id"]).toMatch(/^msg_/);
  });

  it("queues a test event to the one endpoint, and its deliveries list the 2xx attempt", async () => {
    const target = receiverUrl("tested");
    const { endpoint, secret } = await createEndpoint(MEMBER, target.url, ["turn.failed"]);
    const queued = await call("POST", `/context/webhooks/${endpoint.id}/test`, undefined, MEMBER);
    expect(queued.status).toBe(202);
    const { deliveryId } = queued.json as { deliveryId: string };
    const [delivery] = await receivedAtLeast(target.name, 1);
    expect(new Webhook(secret).verify(delivery?.body ?? "", delivery?.headers ?? {})).toMatchObject({
      type: "webhook.test",
      data: { endpointId: endpoint.id },
    });
    expect(delivery?.headers["webhook-id"]).toBe(deliveryId);
    const listed = await call("GET", `/context/webhooks/${endpoint.id}/deliveries`, undefined, MEMBER);
    expect(listed.json).toMatchObject({
      deliveries: [{ id: deliveryId, type: "webhook.test", status: "delivered", attempts: [{ statusCode: 204 }] }],
      next: null,
    });
  });
});

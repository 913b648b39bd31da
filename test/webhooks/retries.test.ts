// At least once: a failed delivery is retried with backoff (message.retry with a delay), under the same webhook-id,
// and each attempt is recorded; after the retry window (simulated time) the delivery is abandoned and its endpoint
// disabled, with why. The consumer is driven by hand (createMessageBatch / getQueueResult).
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { WebhookDeliveryView } from "../../src/webhooks/delivery-store";
import type { WebhookEndpointView } from "../../src/webhooks/endpoint-store";
import { call } from "../fixtures/sessions";
import { ADMIN, consume, createEndpoint, eventMessage, received, receiverUrl } from "./fixtures";

const DAY_MS = 86_400_000;

// Each test's endpoint subscribes to an event type of its own, so no test's event reaches another's endpoint.

async function deliveriesOf(endpointId: string): Promise<WebhookDeliveryView[]> {
  const { json } = await call("GET", `/context/webhooks/${endpointId}/deliveries`, undefined, ADMIN);
  return (json as { deliveries: WebhookDeliveryView[] }).deliveries;
}

/** The seconds from the delivery's last attempt to its next, as recorded (what message.retry was asked to wait). */
async function backoffOf(endpointId: string): Promise<number | null> {
  const [delivery] = await deliveriesOf(endpointId);
  if (!delivery?.nextAttemptAt || !delivery.lastAttemptAt) return null;
  return (Date.parse(delivery.nextAttemptAt) - Date.parse(delivery.lastAttemptAt)) / 1_000;
}

const RETRIED = [{ msgId: "message-1" }];

describe("webhook retries", () => {
  it("retries after the receiver fails twice, with backoff and the same webhook-id, then delivers", async () => {
    const target = receiverUrl("flaky", 2);
    const { endpoint, secret } = await createEndpoint(ADMIN, target.url, ["turn.completed"]);
    const message = eventMessage({ type: "turn.completed" });
    const start = Date.now();
    expect((await consume(message, { now: start })).retryMessages).toEqual(RETRIED);
    expect(await backoffOf(endpoint.id)).toBe(5);
    expect((await consume(message, { now: start + 5_000, attempts: 2 })).retryMessages).toEqual(RETRIED);
    expect(await backoffOf(endpoint.id)).toBe(300);
    const third = await consume(message, { now: start + 305_000, attempts: 3 });
    expect(third.retryMessages).toEqual([]);
    expect(third.explicitAcks).toEqual(["message-1"]);

    const got = await received(target.name);
    expect(got.map((r) => r.status)).toEqual([500, 500, 204]);
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Webhook(secret).verify(got[2]?.body ?? "", got[2]?.headers ?? {})).toMatchObject({
      type: "turn.completed",
    });
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery?.status).toBe("delivered");
    expect(delivery?.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 204],
    ]);
  });

  it("disables the endpoint after the retry window, naming why, and stops retrying", async () => {
    const target = receiverUrl("down", 1_000);
    const { endpoint } = await createEndpoint(ADMIN, target.url, ["turn.failed"]);
    const message = eventMessage({ type: "turn.failed" });
    const start = Date.now();
    expect((await consume(message, { now: start })).retryMessages).toHaveLength(1);
    const last = await consume(message, { now: start + DAY_MS, attempts: 2 });
    expect(last.retryMessages).toEqual([]);
    expect(last.explicitAcks).toEqual(["message-1"]);

    const { json } = await call("GET", `/context/webhooks/${endpoint.id}`, undefined, ADMIN);
    const after = (json as { endpoint: WebhookEndpointView }).endpoint;
    expect(after.enabled).toBe(false);
    expect(after.disabledReason).toMatch(/failed for 24 hours .*answered 500/);
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery?.status).toBe("abandoned");
    expect(delivery?.attempts).toHaveLength(2);
  });

  it("spaces retries so that the last falls at the end of the window, each within Queues' 12-hour limit", async () => {
    const target = receiverUrl("spaced", 1_000);
    const { endpoint } = await createEndpoint(ADMIN, target.url, ["turn.paused"]);
    const message = eventMessage({ type: "turn.paused" });
    let now = Date.now();
    const delays: number[] = [];
    for (let attempt = 1; attempt < 20; attempt++) {
      const result = await consume(message, { now, attempts: attempt });
      if (result.retryMessages.length === 0) break;
      const delay = (await backoffOf(endpoint.id)) ?? 0;
      delays.push(delay);
      now += delay * 1_000;
    }
    expect(delays.slice(0, 5)).toEqual([5, 300, 1_800, 7_200, 18_000]);
    expect(Math.max(...delays)).toBeLessThanOrEqual(43_200);
    expect(delays.reduce((sum, d) => sum + d, 0) * 1_000).toBe(DAY_MS);
  });
});

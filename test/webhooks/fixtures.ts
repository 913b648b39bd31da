// Helpers of the webhook tests: endpoints made through the API, the receiver's URLs and what it received, and the
// queue's consumer driven by hand (createMessageBatch) with a clock of the test's.
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { consumeWebhooks } from "../../src/webhooks/consumer";
import type { WebhookEndpointView } from "../../src/webhooks/endpoint-store";
import { newEventId, type WebhookEvent } from "../../src/webhooks/events";
import type { WebhookMessage } from "../../src/webhooks/queue-message";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";

export const ADMIN = TEST_KEYS.admin.key;
export const MEMBER = TEST_KEYS.chat.key;
export const OTHER_MEMBER = TEST_KEYS.otherMember.key;
export const OTHER_ORG = TEST_KEYS.otherOrg.key;

let unique = 0;

/** A receiver URL of its own (`fail`: its first answers are 500). */
export function receiverUrl(name: string, fail = 0): { name: string; url: string } {
  const own = `${name}-${++unique}-${crypto.randomUUID().slice(0, 8)}`;
  return { name: own, url: `${env.TEST_WEBHOOK_RECEIVER_URL}/hooks/${own}${fail > 0 ? `?fail=${fail}` : ""}` };
}

export interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

/** What the receiver got at `name`, oldest first. */
export async function received(name: string): Promise<Received[]> {
  return (await (await fetch(`${env.TEST_WEBHOOK_RECEIVER_URL}/received/${name}`)).json()) as Received[];
}

/** Waits for `count` deliveries at `name` (the real queue's consumer sends them). */
export async function receivedAtLeast(name: string, count: number): Promise<Received[]> {
  for (;;) {
    const got = await received(name);
    if (got.length >= count) return got;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function createEndpoint(
  key: string,
  url: string,
  events: string[] = ["turn.completed"],
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  const { status, json } = await call("POST", "/context/webhooks", { url, events, description: "A test." }, key);
  if (status !== 201) throw new Error(`endpoint not created (${status}): ${JSON.stringify(json)}`);
  return json as { endpoint: WebhookEndpointView; secret: string };
}

/** An event's queue message, as publishEvent sends it. */
export function eventMessage(event: Partial<WebhookEvent> = {}): WebhookMessage {
  return {
    kind: "event",
    id: newEventId(),
    at: new Date().toISOString(),
    event: {
      type: "turn.completed",
      org: "org-a",
      user: "bob",
      sessionId: "s-1",
      data: { sessionId: "s-1", turnId: "t-1", status: "completed", mode: "general" },
      ...event,
    },
  };
}

/** Hands `body` to the consumer as Queues would (its `attempts`-th delivery), at `now`; what it did with it. */
export async function consume(
  body: WebhookMessage,
  options: { now?: number; attempts?: number; env?: Cloudflare.Env } = {},
) {
  const batch = createMessageBatch("aptix-webhooks", [
    { id: "message-1", timestamp: new Date(), attempts: options.attempts ?? 1, body },
  ]);
  const ctx = createExecutionContext();
  const clock = options.now;
  await consumeWebhooks(batch, options.env ?? env, clock === undefined ? {} : { now: () => clock });
  return getQueueResult(batch, ctx);
}

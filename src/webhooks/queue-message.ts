// The messages the webhook queue carries: an event to fan out to the endpoints that subscribe to it (one per
// published event; `only` names the one endpoint of a test event), or one delivery retried by hand.
import { z } from "zod";
import { WEBHOOK_EVENT_TYPES } from "./events";

/** What `POST /context/webhooks/:id/test` sends: not an event anything subscribes to, delivered to that endpoint only. */
export const WEBHOOK_TEST_EVENT = "webhook.test";

export const QueuedEvent = z.object({
  kind: z.literal("event"),
  /** The event's id (`evt_…`): with an endpoint's id it makes the delivery's `webhook-id`. */
  id: z.string().min(1),
  /** When it happened (ISO): the body's `timestamp`. */
  at: z.string(),
  event: z.object({
    type: z.enum([...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT]),
    org: z.string(),
    user: z.string().nullable(),
    sessionId: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
  }),
  only: z.string().optional(),
});
export type QueuedEvent = z.infer<typeof QueuedEvent>;

export const QueuedDelivery = z.object({ kind: z.literal("delivery"), deliveryId: z.string().min(1) });

export const WebhookMessage = z.discriminatedUnion("kind", [QueuedEvent, QueuedDelivery]);
export type WebhookMessage = z.infer<typeof WebhookMessage>;

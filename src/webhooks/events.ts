// The events aptix tells subscribed endpoints about (signed webhooks, A2A push notifications), and the one call
// that publishes one. Publishing is off every request's path: the event is queued, and the queue's consumer finds
// the endpoints that subscribe to it and delivers (src/webhooks/consumer.ts).
import { JsonAdminLogger } from "../observability/admin-logger";

export const WEBHOOK_EVENT_TYPES = [
  "turn.completed",
  "turn.failed",
  "turn.paused",
  "schedule.failed",
  "budget.exceeded",
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEvent {
  type: WebhookEventType;
  /** The org the event happened in: only its endpoints hear of it. */
  org: string;
  /** Whose session or schedule it concerns (a member's own endpoints hear of theirs); null for the org's own. */
  user: string | null;
  /** The session it concerns, when it concerns one. */
  sessionId: string | null;
  /** Ids and a summary, never a secret nor a person's whole text (the body's `data`). */
  data: Record<string, unknown>;
}

/** A new event id: with an endpoint's id it makes each delivery's `webhook-id`. */
export const newEventId = () => `evt_${crypto.randomUUID().replaceAll("-", "")}`;

/**
 * An event's queue message (QueuedEvent in queue-message.ts). Its id and time are fixed here, once: a message kept
 * and sent again (the session's event outbox) is the same event, and the consumer delivers it once per endpoint.
 */
export interface EventMessage {
  kind: "event";
  id: string;
  at: string;
  event: WebhookEvent;
}

export function eventMessage(event: WebhookEvent, now: number = Date.now()): EventMessage {
  return { kind: "event", id: newEventId(), at: new Date(now).toISOString(), event };
}

/** Queues one event's message; rejects when the queue does not take it (for a caller that keeps it to send again). */
export async function sendEventMessage(env: Cloudflare.Env, message: EventMessage): Promise<void> {
  await env.WEBHOOK_QUEUE.send(message);
}

/**
 * Queues `event` for delivery to the endpoints that subscribe to it: one queue message, sent in `waitUntil` (off the
 * reply's path; nothing here reads D1). Never throws: a failure to queue is logged.
 */
export function publishEvent(
  env: Cloudflare.Env,
  event: WebhookEvent,
  waitUntil: (work: Promise<unknown>) => void,
): void {
  const message = eventMessage(event);
  const failed = (error: unknown) =>
    new JsonAdminLogger({}).addException("[webhooks_publish]", error, [
      ["event", event.type],
      ["org", event.org],
    ]);
  try {
    waitUntil(sendEventMessage(env, message).catch(failed));
  } catch (error) {
    failed(error);
  }
}

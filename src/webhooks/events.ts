// The events aptix tells subscribed endpoints about (signed webhooks, A2A push notifications), and the one call
// that publishes one. Publishing is off every request's path: the event is queued, and the queue's consumer finds
// the endpoints that subscribe to it and delivers (src/webhooks/).
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

/**
 * Queues `event` for delivery to the endpoints that subscribe to it; never throws (a failure is logged). Delivery
 * itself lands with the webhooks work (issue 43): until then nothing is queued.
 */
export function publishEvent(
  _env: Cloudflare.Env,
  _event: WebhookEvent,
  _waitUntil: (work: Promise<unknown>) => void,
): void {}

// Deliveries (`webhook_deliveries`) and their attempts (`webhook_attempts`): one delivery is one event to one endpoint,
// its id the `webhook-id` every retry of it carries; each POST is an attempt, with its status code or error and time.
// A delivery is `pending` until a 2xx (`delivered`) or the end of its retry window (`abandoned`). This module owns
// both tables' SQL.
import { z } from "zod";
import type { Db } from "../db";
import { sha256Hex } from "../secret-text";

export const DELIVERY_STATUSES = ["pending", "delivered", "abandoned"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WebhookAttemptView = z.object({
  attempt: z.number().int(),
  at: z.string(),
  /** The receiver's status code; null when no answer came (a network error, a timeout, a refused URL). */
  statusCode: z.number().int().nullable(),
  /** What failed, in our words (never the receiver's body); null for a 2xx. */
  error: z.string().nullable(),
  durationMs: z.number().int(),
});
export type WebhookAttemptView = z.infer<typeof WebhookAttemptView>;

export const WebhookDeliveryView = z
  .object({
    /** The `webhook-id` header of every attempt. */
    id: z.string(),
    eventId: z.string(),
    type: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    createdAt: z.string(),
    lastAttemptAt: z.string().nullable(),
    /** When the next retry is due (pending), else null. */
    nextAttemptAt: z.string().nullable(),
    attempts: z.array(WebhookAttemptView),
  })
  .meta({ id: "WebhookDelivery" });
export type WebhookDeliveryView = z.infer<typeof WebhookDeliveryView>;

const Row = z.object({
  seq: z.number(),
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  payload: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  window_started_at: z.string(),
  created_at: z.string(),
  last_attempt_at: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
});

/** A delivery as the consumer works on it. */
export interface Delivery {
  seq: number;
  id: string;
  endpointId: string;
  eventId: string;
  type: string;
  /** The signed body, as sent on every attempt. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  windowStartedAt: string;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
}

const delivery = (raw: unknown): Delivery => {
  const row = Row.parse(raw);
  return {
    seq: row.seq,
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    type: row.event_type,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    windowStartedAt: row.window_started_at,
    createdAt: row.created_at,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.next_attempt_at,
  };
};

const AttemptRow = z.object({
  delivery_id: z.string(),
  attempt: z.number(),
  at: z.string(),
  status_code: z.number().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
});

/** The delivery id (`webhook-id`) of event `eventId` to endpoint `endpointId`: the same however often it is fanned out. */
export async function deliveryIdOf(eventId: string, endpointId: string): Promise<string> {
  return `msg_${(await sha256Hex(`${eventId}\n${endpointId}`)).slice(0, 32)}`;
}

export interface NewDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  type: string;
  payload: string;
}

/** One attempt's end, and what the delivery becomes. */
export interface AttemptRecord {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  status: DeliveryStatus;
  nextAttemptAt: string | null;
}

/** A page of deliveries, newest first. */
export const PAGE_LIMIT_MAX = 100;

export class WebhookDeliveries {
  constructor(private readonly db: Db) {}

  /** Stores the deliveries not stored yet (an event fanned out again finds its own). */
  async create(deliveries: readonly NewDelivery[], now: string): Promise<void> {
    if (deliveries.length === 0) return;
    await this.db.batch(
      deliveries.map((d) =>
        this.db
          .prepare(
            `INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event_id, event_type, payload, status, attempts,
               window_started_at, created_at)
             VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
          )
          .bind(d.id, d.endpointId, d.eventId, d.type, d.payload, now, now),
      ),
    );
  }

  /** Event `eventId`'s deliveries that are still pending. */
  async pendingOf(eventId: string): Promise<Delivery[]> {
    const { results } = await this.db
      .prepare("SELECT * FROM webhook_deliveries WHERE event_id = ? AND status = 'pending'")
      .bind(eventId)
      .all();
    return results.map(delivery);
  }

  async get(id: string): Promise<Delivery | null> {
    const row = await this.db.prepare("SELECT * FROM webhook_deliveries WHERE id = ?").bind(id).first();
    return row ? delivery(row) : null;
  }

  /** Endpoint `endpointId`'s delivery `id`, or null. */
  async ofEndpoint(endpointId: string, id: string): Promise<Delivery | null> {
    const found = await this.get(id);
    return found?.endpointId === endpointId ? found : null;
  }

  /**
   * Records the delivery's next attempt (numbered in SQL, so two attempts at once never take one number) and what the
   * delivery becomes, in one batch.
   */
  async recordAttempt(delivery: Delivery, record: AttemptRecord): Promise<void> {
    await this.db.batch([
      this.db
        .prepare(
          `INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, error, duration_ms)
           SELECT id, attempts + 1, ?, ?, ?, ? FROM webhook_deliveries WHERE id = ?`,
        )
        .bind(record.at, record.statusCode, record.error, record.durationMs, delivery.id),
      this.db
        .prepare(
          `UPDATE webhook_deliveries SET attempts = attempts + 1, status = ?, last_attempt_at = ?, next_attempt_at = ?
           WHERE id = ?`,
        )
        .bind(record.status, record.at, record.nextAttemptAt, delivery.id),
    ]);
  }

  /** Ends a pending delivery without an attempt (its endpoint was disabled or removed). */
  async abandon(id: string): Promise<void> {
    await this.db
      .prepare("UPDATE webhook_deliveries SET status = 'abandoned', next_attempt_at = NULL WHERE id = ?")
      .bind(id)
      .run();
  }

  /** A retry by hand: pending again, with a retry window of its own from `now`. */
  async restart(id: string, now: string): Promise<void> {
    await this.db
      .prepare(
        "UPDATE webhook_deliveries SET status = 'pending', window_started_at = ?, next_attempt_at = NULL WHERE id = ?",
      )
      .bind(now, id)
      .run();
  }

  /** Endpoint `endpointId`'s deliveries before `before` (the previous page's `next`), newest first, with their attempts. */
  async list(
    endpointId: string,
    options: { limit: number; before: number | null },
  ): Promise<{ deliveries: WebhookDeliveryView[]; next: number | null }> {
    const { results } = await this.db
      .prepare(`SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
      .bind(endpointId, options.before ?? Number.MAX_SAFE_INTEGER, options.limit + 1)
      .all();
    const rows = results.map(delivery);
    const page = rows.slice(0, options.limit);
    const attempts = new Map<string, WebhookAttemptView[]>();
    if (page.length > 0) {
      const { results: attemptRows } = await this.db
        .prepare(
          `SELECT * FROM webhook_attempts WHERE delivery_id IN (${page.map(() => "?").join(", ")})
           ORDER BY delivery_id, attempt`,
        )
        .bind(...page.map((d) => d.id))
        .all();
      for (const raw of attemptRows) {
        const row = AttemptRow.parse(raw);
        const list = attempts.get(row.delivery_id) ?? [];
        list.push({
          attempt: row.attempt,
          at: row.at,
          statusCode: row.status_code,
          error: row.error,
          durationMs: row.duration_ms,
        });
        attempts.set(row.delivery_id, list);
      }
    }
    return {
      deliveries: page.map((d) => ({
        id: d.id,
        eventId: d.eventId,
        type: d.type,
        status: d.status,
        createdAt: d.createdAt,
        lastAttemptAt: d.lastAttemptAt,
        nextAttemptAt: d.nextAttemptAt,
        attempts: attempts.get(d.id) ?? [],
      })),
      next: rows.length > options.limit ? (page.at(-1)?.seq ?? null) : null,
    };
  }
}

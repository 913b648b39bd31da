// Webhook endpoints (`webhook_endpoints`): an org's (an admin's: told of every session of the org) or one member's
// (told of their own sessions and schedules). The signing secret is sealed by the SecretBox under the endpoint's id
// and opened only to sign a delivery; no view carries it. This module owns the table's SQL.
import { z } from "zod";
import type { Db } from "../db";
import type { SecretBox } from "../tenancy/secret-box";
import { WEBHOOK_EVENT_TYPES } from "./events";

/** The most endpoints one org keeps. */
export const MAX_ENDPOINTS_PER_ORG = 50;

export const WebhookEndpointView = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    description: z.string(),
    enabled: z.boolean(),
    /** Why it was disabled by aptix (its deliveries failed for the whole retry window, or its URL is refused); null otherwise. */
    disabledReason: z.string().nullable(),
    disabledAt: z.string().nullable(),
    /** `org`: told of every session of the org (an admin's); `user`: of its owner's sessions only. */
    scope: z.enum(["org", "user"]),
    /** The member whose sessions it hears of (scope `user`), else null. */
    owner: z.string().nullable(),
    createdBy: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "WebhookEndpoint" });
export type WebhookEndpointView = z.infer<typeof WebhookEndpointView>;

const Row = z.object({
  id: z.string(),
  org: z.string(),
  owner_user: z.string().nullable(),
  created_by: z.string(),
  url: z.string(),
  events: z.string(),
  description: z.string(),
  enabled: z.number(),
  disabled_reason: z.string().nullable(),
  disabled_at: z.string().nullable(),
  secret_ciphertext: z.string(),
  wrapped_key: z.string(),
  key_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** An A2A push notification config's (migration 0030): the task it is told of, and the client's token, sealed. */
  a2a_task_id: z.string().nullable().optional(),
  a2a_token_sealed: z.string().nullable().optional(),
});
type Row = z.infer<typeof Row>;

const Sealed = z.object({ valueCiphertext: z.string(), wrappedKey: z.string(), keyId: z.string() });

/** An endpoint as the consumer reads it: its view, its org, and its sealed secret. */
export interface StoredEndpoint extends WebhookEndpointView {
  org: string;
  sealed: { valueCiphertext: string; wrappedKey: string; keyId: string };
  /** An A2A push notification config: told of this task's turn only, in A2A's payload, with the client's token. */
  a2a: { taskId: string; token: z.infer<typeof Sealed> | null } | null;
}

const Events = z.array(z.enum(WEBHOOK_EVENT_TYPES));

function stored(row: Row): StoredEndpoint {
  return {
    id: row.id,
    org: row.org,
    url: row.url,
    events: Events.parse(JSON.parse(row.events)),
    description: row.description,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    scope: row.owner_user === null ? "org" : "user",
    owner: row.owner_user,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    sealed: { valueCiphertext: row.secret_ciphertext, wrappedKey: row.wrapped_key, keyId: row.key_id },
    a2a: row.a2a_task_id
      ? { taskId: row.a2a_task_id, token: row.a2a_token_sealed ? Sealed.parse(JSON.parse(row.a2a_token_sealed)) : null }
      : null,
  };
}

/** The view of a stored endpoint: everything but its org and sealed secret. */
export function viewOf(endpoint: StoredEndpoint): WebhookEndpointView {
  const { org: _org, sealed: _sealed, a2a: _a2a, ...view } = endpoint;
  return view;
}

/** What a secret is sealed under: its endpoint's id (a row copied to another id does not open). */
export const secretName = (endpointId: string) => `webhook:${endpointId}`;

export interface NewEndpoint {
  org: string;
  ownerUser: string | null;
  createdBy: string;
  url: string;
  events: readonly string[];
  description: string;
}

export interface EndpointChange {
  url?: string | undefined;
  events?: readonly string[] | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
}

export class WebhookEndpoints {
  constructor(private readonly db: Db) {}

  /** How many endpoints `org` has. */
  async count(org: string): Promise<number> {
    const row = await this.db
      .prepare("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE org = ? AND a2a_task_id IS NULL")
      .bind(org)
      .first<{ n: number }>();
    return row?.n ?? 0;
  }

  /** The statement that stores a new endpoint with `secret` sealed (run in a batch with its audit row). */
  async insertStatement(
    box: SecretBox,
    id: string,
    endpoint: NewEndpoint,
    secret: string,
    now: string,
  ): Promise<D1PreparedStatement> {
    const sealed = await box.seal(endpoint.org, secretName(id), secret);
    return this.db
      .prepare(
        `INSERT INTO webhook_endpoints (id, org, owner_user, created_by, url, events, description, enabled,
           secret_ciphertext, wrapped_key, key_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
      )
      .bind(
        id,
        endpoint.org,
        endpoint.ownerUser,
        endpoint.createdBy,
        endpoint.url,
        JSON.stringify(endpoint.events),
        endpoint.description,
        sealed.valueCiphertext,
        sealed.wrappedKey,
        sealed.keyId,
        now,
        now,
      );
  }

  /** `org`'s endpoint `id`, or null (another org's is null too). */
  async get(org: string, id: string): Promise<StoredEndpoint | null> {
    const row = await this.db
      .prepare("SELECT * FROM webhook_endpoints WHERE id = ? AND org = ? AND a2a_task_id IS NULL")
      .bind(id, org)
      .first();
    return row ? stored(Row.parse(row)) : null;
  }

  /** Endpoint `id` whatever its org (the consumer's read; the event's org was checked where it was fanned out). */
  async byId(id: string): Promise<StoredEndpoint | null> {
    const row = await this.db.prepare("SELECT * FROM webhook_endpoints WHERE id = ?").bind(id).first();
    return row ? stored(Row.parse(row)) : null;
  }

  /** `org`'s endpoints, oldest first: all of them, or (`ownerUser`) that member's own. */
  async list(org: string, ownerUser: string | null): Promise<StoredEndpoint[]> {
    const { results } =
      ownerUser === null
        ? await this.db
            .prepare("SELECT * FROM webhook_endpoints WHERE org = ? AND a2a_task_id IS NULL ORDER BY created_at, id")
            .bind(org)
            .all()
        : await this.db
            .prepare(
              "SELECT * FROM webhook_endpoints WHERE org = ? AND owner_user = ? AND a2a_task_id IS NULL ORDER BY created_at, id",
            )
            .bind(org, ownerUser)
            .all();
    return results.map((row) => stored(Row.parse(row)));
  }

  /**
   * The enabled endpoints that hear of `type` happening to `user` in `org` (the org's own endpoints, and the member's
   * when the event is theirs), created by `at` (an event retried later does not reach an endpoint made since).
   */
  async subscribers(org: string, user: string | null, type: string, at: string): Promise<StoredEndpoint[]> {
    const { results } = await this.db
      .prepare(
        `SELECT * FROM webhook_endpoints
         WHERE org = ? AND enabled = 1 AND created_at <= ? AND (owner_user IS NULL OR owner_user = ?)`,
      )
      .bind(org, at, user)
      .all();
    return results.map((row) => stored(Row.parse(row))).filter((e) => e.events.some((t) => t === type));
  }

  /**
   * The statement that answers one row, `{heard: 1}` when an endpoint hears of `type` happening to `user` in `org` at
   * `at` (the conditions of subscribers()), else `{heard: 0}`: asked in the session's list write, so a turn's stop is
   * queued only when someone will be told of it (src/session/list-writer.ts). It never answers 0 when the consumer
   * would deliver: an A2A push config counts for its own task (`taskId`, the turn's id) as the consumer's filter does,
   * and a row whose events do not read as JSON counts as hearing (the consumer decides).
   */
  listenedStatement(
    org: string,
    user: string | null,
    type: string,
    at: string,
    taskId: string | null,
  ): D1PreparedStatement {
    return this.db
      .prepare(
        `SELECT EXISTS (
           SELECT 1 FROM webhook_endpoints
           WHERE org = ?1 AND enabled = 1 AND created_at <= ?2 AND (owner_user IS NULL OR owner_user = ?3)
             AND (a2a_task_id IS NULL OR a2a_task_id = '' OR a2a_task_id = ?5)
             AND (NOT json_valid(events) OR EXISTS (SELECT 1 FROM json_each(events) WHERE value = ?4))
         ) AS heard`,
      )
      .bind(org, at, user, type, taskId);
  }

  /** The statement that changes `id` (an `enabled: true` clears why it was disabled). */
  changeStatement(org: string, id: string, change: EndpointChange, now: string): D1PreparedStatement {
    const fields: [string, string | number][] = [];
    if (change.url !== undefined) fields.push(["url = ?", change.url]);
    if (change.events !== undefined) fields.push(["events = ?", JSON.stringify(change.events)]);
    if (change.description !== undefined) fields.push(["description = ?", change.description]);
    if (change.enabled !== undefined)
      fields.push(["enabled = ?, disabled_reason = NULL, disabled_at = NULL", change.enabled ? 1 : 0]);
    const sets = ["updated_at = ?", ...fields.map(([set]) => set)];
    const values = [now, ...fields.map(([, value]) => value)];
    return this.db
      .prepare(`UPDATE webhook_endpoints SET ${sets.join(", ")} WHERE id = ? AND org = ?`)
      .bind(...values, id, org);
  }

  deleteStatement(org: string, id: string): D1PreparedStatement {
    return this.db.prepare("DELETE FROM webhook_endpoints WHERE id = ? AND org = ?").bind(id, org);
  }

  // A2A push notification configs (src/a2a/push-configs.ts): endpoints told of one task's turn only.

  /** Stores a push notification config for `taskId` as an endpoint, its signing secret and the client's token sealed. */
  async insertA2A(
    box: SecretBox,
    id: string,
    endpoint: NewEndpoint,
    push: { taskId: string; token: string; secret: string },
    now: string,
  ): Promise<void> {
    const insert = await this.insertStatement(box, id, endpoint, push.secret, now);
    const token = push.token ? JSON.stringify(await box.seal(endpoint.org, `a2a-token:${id}`, push.token)) : null;
    await this.db.batch([
      insert,
      this.db
        .prepare("UPDATE webhook_endpoints SET a2a_task_id = ?, a2a_token_sealed = ? WHERE id = ?")
        .bind(push.taskId, token, id),
    ]);
  }

  /** The push notification configs of `taskId`, oldest first. */
  async listA2A(taskId: string): Promise<StoredEndpoint[]> {
    const { results } = await this.db
      .prepare("SELECT * FROM webhook_endpoints WHERE a2a_task_id = ? ORDER BY created_at, id")
      .bind(taskId)
      .all();
    return results.map((row) => stored(Row.parse(row)));
  }

  /** Deletes push notification config `id` of `taskId`; whether there was one. */
  async deleteA2A(taskId: string, id: string): Promise<boolean> {
    const result = await this.db
      .prepare("DELETE FROM webhook_endpoints WHERE id = ? AND a2a_task_id = ?")
      .bind(id, taskId)
      .run();
    return result.meta.changes > 0;
  }

  /** Disables `id` for `reason` (aptix's doing: the admin page shows it). */
  async disable(id: string, reason: string, now: string): Promise<void> {
    await this.db
      .prepare(
        "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ? WHERE id = ?",
      )
      .bind(reason, now, now, id)
      .run();
  }
}

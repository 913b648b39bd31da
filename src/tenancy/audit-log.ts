// The audit log: every change an admin or operator makes (model routes, modes, MCP servers, secrets by name only,
// keys, users, budgets, grants revoked) is one append-only row in D1 (`audit_log`): who made it (org, user,
// credential, role), whose configuration it changed (an org's, or the deployment's), what (an action and its
// target), the target before and after (no secret's value ever), and the request it came in. Admins read their
// org's rows; operators read every row.
import { z } from "zod";
import type { Db } from "../db";
import type { Principal } from "../principal";
import { roleOf } from "./roles";

/** The actions the log records, one word pair each. */
export const AUDIT_ACTIONS = [
  "model_route.put",
  "model_route.delete",
  "mode.put",
  "mode.hide",
  "mode.show",
  "mode.delete",
  "mode.patch",
  "mode.restore",
  "mcp_server.put",
  "mcp_server.delete",
  "secret.put",
  "secret.delete",
  "secrets.rewrap",
  "key.create",
  "key.change",
  "key.revoke",
  "user.disable",
  "user.enable",
  "budget.put",
  "grant.revoke",
  "webhook.create",
  "webhook.change",
  "webhook.delete",
  "memory.put",
  "user.delete",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What one change was: whose configuration (an org, or null: the deployment's), the action, its target, the states. */
export interface AuditChange {
  org: string | null;
  action: AuditAction;
  target: string;
  before?: unknown;
  after?: unknown;
}

/** Who made a change, and in which request. */
export interface AuditActor {
  principal: Principal;
  requestId: string;
}

/** Fields whose value is a credential: kept out of a row's before and after, whatever the target. */
const CREDENTIAL_FIELDS = new Set(["value", "secret", "token", "apiKey", "password"]);

/** `state` with every credential field's value replaced (a secret's value never reaches the log). */
function withoutCredentials(state: unknown): unknown {
  if (Array.isArray(state)) return state.map(withoutCredentials);
  if (typeof state !== "object" || state === null) return state;
  return Object.fromEntries(
    Object.entries(state).map(([name, value]) => [
      name,
      CREDENTIAL_FIELDS.has(name) && typeof value === "string" ? "[redacted]" : withoutCredentials(value),
    ]),
  );
}

const json = (state: unknown) =>
  state === undefined || state === null ? null : JSON.stringify(withoutCredentials(state));

/** The statement that appends one change (to run alone, or in the batch that makes the change). */
export function auditStatement(db: Db, actor: AuditActor, change: AuditChange): D1PreparedStatement {
  const { principal } = actor;
  return db
    .prepare(
      `INSERT INTO audit_log (org, actor_org, actor_user, actor_credential, actor_role, action, target, before_json,
         after_json, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      change.org ?? "",
      principal.org,
      principal.user,
      principal.credentialId,
      roleOf(principal.scopes),
      change.action,
      change.target,
      json(change.before),
      json(change.after),
      actor.requestId,
    );
}

/** Appends one change, before the answer that reports it goes out. */
export async function recordAudit(db: Db, actor: AuditActor, change: AuditChange): Promise<void> {
  await auditStatement(db, actor, change).run();
}

export const AuditEntry = z
  .object({
    seq: z.number().int(),
    at: z.string(),
    /** The org whose configuration changed, or null for the deployment's. */
    org: z.string().nullable(),
    actor: z.object({ org: z.string(), user: z.string(), credential: z.string(), role: z.string() }),
    action: z.string(),
    target: z.string(),
    before: z.unknown().nullable(),
    after: z.unknown().nullable(),
    requestId: z.string(),
  })
  .meta({ id: "AuditEntry" });
export type AuditEntry = z.infer<typeof AuditEntry>;

const Row = z.object({
  seq: z.number().int(),
  at: z.string(),
  org: z.string(),
  actor_org: z.string(),
  actor_user: z.string(),
  actor_credential: z.string(),
  actor_role: z.string(),
  action: z.string(),
  target: z.string(),
  before_json: z.string().nullable(),
  after_json: z.string().nullable(),
  request_id: z.string(),
});

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/**
 * A page of the log, newest first: `org`'s rows (undefined: every row, an operator's view; null: the deployment's),
 * those before `before` (a seq), at most `limit`.
 */
export async function auditPage(
  db: Db,
  filter: { org: string | null | undefined; before: number | null; limit: number },
): Promise<AuditEntry[]> {
  const where: string[] = [];
  const values: (string | number)[] = [];
  if (filter.org !== undefined) {
    where.push("org = ?");
    values.push(filter.org ?? "");
  }
  if (filter.before !== null) {
    where.push("seq < ?");
    values.push(filter.before);
  }
  const { results } = await db
    .prepare(
      `SELECT seq, at, org, actor_org, actor_user, actor_credential, actor_role, action, target, before_json, after_json,
         request_id FROM audit_log ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ?`,
    )
    .bind(...values, filter.limit)
    .all();
  return results.map((raw) => {
    const row = Row.parse(raw);
    return {
      seq: row.seq,
      at: row.at,
      org: row.org === "" ? null : row.org,
      actor: { org: row.actor_org, user: row.actor_user, credential: row.actor_credential, role: row.actor_role },
      action: row.action,
      target: row.target,
      before: parsed(row.before_json),
      after: parsed(row.after_json),
      requestId: row.request_id,
    };
  });
}

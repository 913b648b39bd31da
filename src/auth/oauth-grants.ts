// aptix's record of the OAuth grants people give MCP clients (D1's oauth_grants): written at consent, read on each
// request a token of the grant makes (an isolate trusts what it read for AUTH_CACHE_TTL_MS, as for keys), listed
// per user and revoked. The authorization server's own records (KV) are revoked too, but it is this row that ends
// a client's access at once: KV's copies elsewhere converge within a minute.
import { z } from "zod";
import type { Db } from "../db";
import { ExpiringMap } from "../isolate-cache";
import type { Principal } from "../principal";
import { AUTH_CACHE_TTL_MS } from "./api-keys";

/** What a token of a grant carries to aptix (`ctx.props`, encrypted by the authorization server at rest). */
export const GrantProps = z.object({
  grantId: z.string().startsWith("grant_"),
  org: z.string().min(1),
  user: z.string().min(1),
  scopes: z.array(z.string()),
});
export type GrantProps = z.infer<typeof GrantProps>;

/**
 * The authorization server's id for a user: unique across orgs, without the ':' its tokens use as a separator
 * (its userId appears inside each token; it names org and user, nothing secret).
 */
export function oauthUserId(org: string, user: string): string {
  // encodeURIComponent always escapes '|' and ':', so no two (org, user) pairs meet.
  return `${encodeURIComponent(org)}|${encodeURIComponent(user)}`;
}

export function newGrantId(): string {
  return `grant_${crypto.randomUUID().replace(/-/g, "")}`;
}

/**
 * Records a grant the authorization server made (`kvGrantId`, its own id of it). The grants the server replaced
 * with it (the person's earlier ones to the same client) keep their records until the list is read
 * (standingGrants marks them revoked); their tokens are refused by the server already.
 */
export async function recordGrant(
  db: Db,
  grant: {
    id: string;
    kvGrantId: string;
    org: string;
    user: string;
    clientId: string;
    clientName: string;
    scopes: string[];
    resource: string;
  },
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO oauth_grants (id, kv_grant_id, org, user_id, client_id, client_name, scopes, resource)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      grant.id,
      grant.kvGrantId,
      grant.org,
      grant.user,
      grant.clientId,
      grant.clientName,
      JSON.stringify(grant.scopes),
      grant.resource,
    )
    .run();
}

interface KnownGrant {
  live: boolean;
  userDisabled: boolean;
}
const cache = new ExpiringMap<string, KnownGrant>(1_000);

export type GrantCheck = { ok: true } | { ok: false; reason: "revoked" | "user_disabled" };

/** Whether the grant `id` still stands (not revoked, its user not disabled). */
// oauth_grants' rows as read back, parsed once (snake_case to camelCase).
const GrantStateRow = z
  .object({ revoked_at: z.string().nullable(), disabled_at: z.string().nullable() })
  .transform((r) => ({ live: r.revoked_at === null, userDisabled: r.disabled_at !== null }));
const RevokedRow = z
  .object({ id: z.string(), kv_grant_id: z.string() })
  .transform((r) => ({ id: r.id, kvGrantId: r.kv_grant_id }));

export async function checkGrant(db: Db, id: string, now = Date.now()): Promise<GrantCheck> {
  let hit = cache.get(id, now);
  if (!hit) {
    const row = await db
      .prepare(
        `SELECT g.revoked_at, u.disabled_at FROM oauth_grants g
         LEFT JOIN users u ON u.org = g.org AND u.id = g.user_id WHERE g.id = ?`,
      )
      .bind(id)
      .first();
    // A grant not found is not kept: the next request reads again (a record a moment behind is not a refusal).
    if (row === null) return { ok: false, reason: "revoked" };
    hit = GrantStateRow.parse(row);
    cache.set(id, hit, now + AUTH_CACHE_TTL_MS);
  }
  if (hit.userDisabled) return { ok: false, reason: "user_disabled" };
  return hit.live ? { ok: true } : { ok: false, reason: "revoked" };
}

/** The principal a grant's token stands for. */
export function principalOfGrant(props: GrantProps): Principal {
  return {
    keyId: props.grantId,
    credentialId: props.grantId,
    org: props.org,
    user: props.user,
    scopes: props.scopes,
    via: "oauth",
  };
}

export const GrantView = z
  .object({
    id: z.string(),
    clientId: z.string(),
    clientName: z.string(),
    scopes: z.array(z.string()),
    resource: z.string(),
    createdAt: z.string(),
  })
  .meta({ id: "Grant" });
export type GrantView = z.infer<typeof GrantView>;

const GrantRow = z.object({
  id: z.string(),
  kv_grant_id: z.string(),
  client_id: z.string(),
  client_name: z.string(),
  scopes: z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text))),
  resource: z.string(),
  created_at: z.string(),
});

/**
 * The grants `user` of `org` has given and not revoked, newest first, as aptix recorded them with the authorization
 * server's id of each (`kvGrantId`).
 */
export async function listGrantRecords(
  db: Db,
  org: string,
  user: string,
): Promise<(GrantView & { kvGrantId: string })[]> {
  const { results } = await db
    .prepare(
      `SELECT id, kv_grant_id, client_id, client_name, scopes, resource, created_at FROM oauth_grants
       WHERE org = ? AND user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id`,
    )
    .bind(org, user)
    .all();
  return results.map((row) => {
    const r = GrantRow.parse(row);
    return {
      kvGrantId: r.kv_grant_id,
      id: r.id,
      clientId: r.client_id,
      clientName: r.client_name,
      scopes: r.scopes,
      resource: r.resource,
      createdAt: r.created_at,
    };
  });
}

/**
 * Revokes the grants of `user` in `org` (one, when `id` is given; all otherwise): they end in D1 at once and in
 * this isolate's copies; answers the ids revoked.
 */
export async function revokeGrants(
  db: Db,
  org: string,
  user: string,
  id?: string,
): Promise<{ id: string; kvGrantId: string }[]> {
  const { results } = await db
    .prepare(
      `UPDATE oauth_grants SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
       WHERE org = ? AND user_id = ? AND revoked_at IS NULL ${id ? "AND id = ?" : ""} RETURNING id, kv_grant_id`,
    )
    .bind(...(id ? [org, user, id] : [org, user]))
    .all();
  const revoked = results.map((row) => RevokedRow.parse(row));
  for (const row of revoked) cache.delete(row.id);
  return revoked;
}

/**
 * Revokes aptix's record of the grant the authorization server knows as `kvGrantId` (a reused refresh token names
 * only that): it ends in D1 at once and in this isolate's copies; answers the ids revoked.
 */
export async function revokeServerGrant(db: Db, kvGrantId: string): Promise<string[]> {
  const { results } = await db
    .prepare(
      `UPDATE oauth_grants SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
       WHERE kv_grant_id = ? AND revoked_at IS NULL RETURNING id`,
    )
    .bind(kvGrantId)
    .all();
  const ids = results.map((row) => z.object({ id: z.string() }).parse(row).id);
  for (const id of ids) cache.delete(id);
  return ids;
}

// API keys: hashed with SHA-256 and looked up in D1, with a short in-isolate cache for hot paths.

import { z } from "zod";
import type { Db } from "../db";
import { ExpiringMap } from "../isolate-cache";
import type { Principal } from "../principal";
import { sha256Hex } from "../secret-text";
import { holdsScope } from "../tenancy/roles";

const ExpiryRow = z.object({ expires_at: z.string().nullable() }).transform((r) => ({ expiresAt: r.expires_at }));

/** Scopes as stored: a JSON array of scope names. */
export const StoredScopes = z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text)));

const ApiKeyRow = z.object({
  id: z.string(),
  org: z.string().min(1),
  user_id: z.string().min(1),
  scopes: StoredScopes,
  expires_at: z.string().nullable(),
  disabled_at: z.string().nullable(),
});

/** What a key is stored and looked up by: its SHA-256, never the key. */
export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(key);
}

/**
 * How long an isolate trusts what it read about a key: a key revoked (or changed) elsewhere stops working in
 * every isolate within this bound; in the isolate that revoked it, at once.
 */
export const AUTH_CACHE_TTL_MS = 5_000;
interface KnownKey {
  principal: Principal;
  keyExpiresAt: number | null;
  userDisabled: boolean;
}
const cache = new ExpiringMap<string, KnownKey>(1_000);

/** What a key stands for, or why it does not: unknown (or revoked), past its expiry, or its user disabled. */
export type Authentication =
  | { ok: true; principal: Principal }
  | { ok: false; reason: "unknown" | "expired" | "user_disabled" };

/** Known keys only are cached (a new key works at once; a revoked one stops within AUTH_CACHE_TTL_MS). */
export async function authenticateApiKey(db: Db, key: string, now = Date.now()): Promise<Authentication> {
  const keyHash = await hashApiKey(key);
  let hit = cache.get(keyHash, now);
  if (!hit) {
    const row = await db
      .prepare(
        `SELECT k.id, k.org, k.user_id, k.scopes, k.expires_at, u.disabled_at FROM api_keys k
         LEFT JOIN users u ON u.org = k.org AND u.id = k.user_id WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
      )
      .bind(keyHash)
      .first();
    if (!row) return { ok: false, reason: "unknown" };
    const parsed = ApiKeyRow.parse(row);
    hit = {
      principal: {
        keyId: parsed.id,
        credentialId: parsed.id,
        org: parsed.org,
        user: parsed.user_id,
        scopes: parsed.scopes,
        via: "api_key",
      },
      keyExpiresAt: parsed.expires_at ? Date.parse(parsed.expires_at) : null,
      userDisabled: parsed.disabled_at !== null,
    };
    cache.set(keyHash, hit, now + AUTH_CACHE_TTL_MS);
  }
  if (hit.userDisabled) return { ok: false, reason: "user_disabled" };
  if (hit.keyExpiresAt !== null && hit.keyExpiresAt <= now) return { ok: false, reason: "expired" };
  return { ok: true, principal: hit.principal };
}

/** When the key `keyId` expires (null: never), which a browser session signed in with it must not outlive. */
export async function keyExpiry(db: Db, keyId: string): Promise<string | null> {
  const row = await db.prepare("SELECT expires_at FROM api_keys WHERE id = ?").bind(keyId).first();
  return row ? ExpiryRow.parse(row).expiresAt : null;
}

const StandingRow = z.object({
  revoked_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  key_scopes: z.string().nullable(),
  disabled_at: z.string().nullable(),
  signed_in_scopes: z.string().nullable(),
});

/**
 * Whether work that outlives the request that began it (a schedule's run, a WebSocket's frames) may still act for
 * `user` with the key `keyId`, and with which role: `problem` is "revoked", "expired" or "user_disabled" (null: it
 * may), and `admin` is the standing as it is now, not when the work began: the key's scopes as they are (an admin may
 * have narrowed them), or, for a person's own bucket (`user:<id>`, signed in by single sign-on or Cloudflare Access),
 * the scopes of their latest sign-in. Any other id no key of the org has (a key deleted) no longer stands.
 */
export interface Standing {
  problem: "revoked" | "expired" | "user_disabled" | null;
  admin: boolean;
}

/** The standing of the key `keyId` of `org` for `user` (above), in one read. */
export function keyStanding(db: Db, org: string, user: string, keyId: string, now = Date.now()): Promise<Standing> {
  // Trusted for AUTH_CACHE_TTL_MS, as a request's key is: runs due together (one person's many schedules) read once.
  const cacheKey = `${org}\n${user}\n${keyId}`;
  const known = standings.get(cacheKey, now);
  if (known) return known;
  const read = readStanding(db, org, user, keyId, now);
  standings.set(cacheKey, read, now + AUTH_CACHE_TTL_MS);
  read.catch(() => standings.delete(cacheKey));
  return read;
}

const standings = new ExpiringMap<string, Promise<Standing>>(1_000);

const Scopes = z.array(z.string());

/** The key id of a person's own bucket (browser-sessions.ts, cloudflare-access.ts): `user:<id>`, no key of the table. */
const PERSONAL_BUCKET = "user:";

async function readStanding(db: Db, org: string, user: string, keyId: string, now: number): Promise<Standing> {
  const row = await db
    .prepare(
      `SELECT (SELECT revoked_at FROM api_keys WHERE id = ?1 AND org = ?2) AS revoked_at,
         (SELECT expires_at FROM api_keys WHERE id = ?1 AND org = ?2) AS expires_at,
         (SELECT scopes FROM api_keys WHERE id = ?1 AND org = ?2) AS key_scopes,
         (SELECT disabled_at FROM users WHERE org = ?2 AND id = ?3) AS disabled_at,
         (SELECT scopes FROM browser_sessions WHERE org = ?2 AND user_id = ?3 AND api_key_id IS NULL
           ORDER BY created_at DESC LIMIT 1) AS signed_in_scopes`,
    )
    .bind(keyId, org, user)
    .first();
  const standing = StandingRow.parse(row);
  const personal = keyId.startsWith(PERSONAL_BUCKET);
  if (standing.key_scopes === null && !personal) return { problem: "revoked", admin: false };
  const scopes = standing.key_scopes ?? standing.signed_in_scopes;
  const admin = scopes !== null && holdsScope(Scopes.parse(JSON.parse(scopes)), "admin");
  if (standing.revoked_at !== null) return { problem: "revoked", admin };
  if (standing.expires_at !== null && Date.parse(standing.expires_at) <= now) return { problem: "expired", admin };
  return { problem: standing.disabled_at !== null ? "user_disabled" : null, admin };
}

/** Forgets what this isolate knows of the key `keyId` (revoked or changed here: it takes effect at once). */
export function forgetApiKey(keyId: string): void {
  cache.deleteWhere((known) => known.principal.keyId === keyId);
  standings.deleteWhere(() => true);
}

/** Forgets what this isolate knows of the keys of `user` in `org` (disabled or enabled here: at once). */
export function forgetKeysOfUser(org: string, user: string): void {
  cache.deleteWhere((known) => known.principal.org === org && known.principal.user === user);
  standings.deleteWhere(() => true);
}

/** A live key as an admin sees it (never its hash). */
export interface StoredKey {
  id: string;
  name: string;
  user: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
}

const StoredKeyRow = z
  .object({
    id: z.string(),
    name: z.string(),
    user_id: z.string(),
    scopes: StoredScopes,
    created_at: z.string(),
    expires_at: z.string().nullable(),
  })
  .transform(
    (r): StoredKey => ({
      id: r.id,
      name: r.name,
      user: r.user_id,
      scopes: r.scopes,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
    }),
  );

/** The live (not revoked) keys of `org`, the newest first; `onlyId`: that key alone. */
export async function liveKeys(db: Db, org: string, onlyId?: string): Promise<StoredKey[]> {
  const { results } = await db
    .prepare(
      `SELECT id, name, user_id, scopes, created_at, expires_at FROM api_keys
     WHERE org = ? AND revoked_at IS NULL ${onlyId ? "AND id = ?" : ""} ORDER BY created_at DESC, id`,
    )
    .bind(...(onlyId ? [org, onlyId] : [org]))
    .all();
  return results.map((r) => StoredKeyRow.parse(r));
}

/** Whether `org` has a key, live or revoked, that acts for `user`. */
export async function hasKeyFor(db: Db, org: string, user: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS found FROM api_keys WHERE org = ? AND user_id = ? LIMIT 1")
    .bind(org, user)
    .first();
  return row !== null;
}

/** The scopes of `user`'s live keys in `org`, as stored (JSON arrays), to batch with other reads. */
export function liveKeyScopesStatement(db: Db, org: string, user: string): D1PreparedStatement {
  return db.prepare("SELECT scopes FROM api_keys WHERE org = ? AND user_id = ? AND revoked_at IS NULL").bind(org, user);
}

/** The insert of a new key (by its hash), to batch with its audit row. */
export function insertKeyStatement(
  db: Db,
  key: Omit<StoredKey, "createdAt"> & { org: string; keyHash: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .bind(key.id, key.keyHash, key.name, key.org, key.user, JSON.stringify(key.scopes), key.expiresAt);
}

/** The change of a key's name, scopes or expiry (null when nothing of them changes), to batch with its audit row. */
export function changeKeyStatement(
  db: Db,
  org: string,
  id: string,
  change: Partial<Pick<StoredKey, "name" | "scopes" | "expiresAt">>,
): D1PreparedStatement | null {
  const sets: string[] = [];
  const values: (string | null)[] = [];
  if (change.name !== undefined) {
    sets.push("name = ?");
    values.push(change.name);
  }
  if (change.scopes !== undefined) {
    sets.push("scopes = ?");
    values.push(JSON.stringify(change.scopes));
  }
  if (change.expiresAt !== undefined) {
    sets.push("expires_at = ?");
    values.push(change.expiresAt);
  }
  if (sets.length === 0) return null;
  return db.prepare(`UPDATE api_keys SET ${sets.join(", ")} WHERE id = ? AND org = ?`).bind(...values, id, org);
}

/** The revocation of a live key of `org`, to batch with its audit row. */
export function revokeKeyStatement(db: Db, org: string, id: string): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE api_keys SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ? AND org = ? AND revoked_at IS NULL",
    )
    .bind(id, org);
}

/**
 * Deletes a key for good (an eval run's own key when its run ends: src/evals/eval-jobs.ts) and forgets it in this
 * isolate. Keys people make are revoked instead (revokeKeyStatement), so the audit and usage rows still name them.
 */
export async function deleteApiKey(db: Db, org: string, id: string): Promise<void> {
  await db.prepare("DELETE FROM api_keys WHERE id = ? AND org = ?").bind(id, org).run();
  forgetApiKey(id);
}

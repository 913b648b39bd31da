// Browser sessions: after single sign-on the console holds an opaque secret in an HttpOnly, Secure, SameSite=Lax
// cookie; D1 keeps only its SHA-256, with the user, org and scopes, an absolute end and an idle end. Requests a
// cookie authenticates that change anything must also carry the session's CSRF token (X-CSRF-Token), which a
// page of another site can neither read nor send. Sign-out and disabling the user end the session server-side;
// another isolate stops trusting what it read within AUTH_CACHE_TTL_MS, as for a revoked key.
import { z } from "zod";
import type { Db } from "../db";
import { ExpiringMap } from "../isolate-cache";
import type { Principal, Via } from "../principal";
import { randomToken, sha256Hex } from "../secret-text";
import { AUTH_CACHE_TTL_MS } from "./api-keys";

/**
 * The cookie's name, set with Hono's `host` prefix (`__Host-aptix_session`): pinned to this host, path / and
 * Secure (browsers refuse it otherwise; they treat http://localhost as secure).
 */
export const SESSION_COOKIE = "aptix_session";
/** The header a cookie-authenticated request that changes anything carries its CSRF token in. */
export const CSRF_HEADER = "X-CSRF-Token";
/** How often a session's idle end is moved on (a request sooner than this after the last move is not written). */
const IDLE_WRITE_EVERY_MS = 60_000;

/** The CSRF token of the session whose cookie holds `secret`: derived from it, so nothing more is stored. */
export async function csrfTokenOf(secret: string): Promise<string> {
  return (await sha256Hex(`csrf:${secret}`)).slice(0, 43);
}

export interface NewBrowserSession {
  /** The cookie's value (shown to the browser once, in Set-Cookie). */
  secret: string;
  id: string;
  expiresAt: string;
}

/**
 * A new browser session for `who`. Signed in with an API key (`apiKey`), it stands only while the key does: it ends
 * no later than the key's expiry, and with the key's revocation; its model calls count against the key.
 */
export async function createBrowserSession(
  db: Db,
  who: { org: string; user: string; scopes: readonly string[]; via: Via },
  lifetime: { lifetimeMs: number; idleMs: number },
  now = Date.now(),
  apiKey: { id: string; expiresAt: string | null } | null = null,
): Promise<NewBrowserSession> {
  const secret = randomToken();
  const id = randomToken("bs_", 12);
  const end = Math.min(
    now + lifetime.lifetimeMs,
    apiKey?.expiresAt ? Date.parse(apiKey.expiresAt) : Number.POSITIVE_INFINITY,
  );
  const expiresAt = new Date(end).toISOString();
  const idleUntil = new Date(Math.min(now + lifetime.idleMs, end)).toISOString();
  await db
    .prepare(
      `INSERT INTO browser_sessions (id, secret_hash, org, user_id, scopes, via, api_key_id, expires_at, idle_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      id,
      await sha256Hex(secret),
      who.org,
      who.user,
      JSON.stringify(who.scopes),
      who.via,
      apiKey?.id ?? null,
      expiresAt,
      idleUntil,
    )
    .run();
  return { secret, id, expiresAt };
}

const SessionRow = z.object({
  id: z.string(),
  org: z.string(),
  user_id: z.string(),
  scopes: z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text))),
  via: z.string(),
  api_key_id: z.string().nullable(),
  key_live: z.number().nullable(),
  key_scopes: z.string().nullable(),
  expires_at: z.string(),
  idle_until: z.string(),
  ended_at: z.string().nullable(),
  disabled_at: z.string().nullable(),
});

interface KnownSession {
  principal: Principal;
  expiresAt: number;
  idleUntil: number;
  ended: boolean;
  /** When this isolate last moved the idle end on. */
  idleWrittenAt: number;
}

const cache = new ExpiringMap<string, KnownSession>(1_000);

export type SessionLookup =
  | { ok: true; principal: Principal; expiresAt: string; touch: (() => Promise<void>) | null }
  | { ok: false; reason: "unknown" | "ended" | "expired" | "user_disabled" };

/**
 * The browser session whose cookie holds `secret`, with the write that moves its idle end on (run it after the
 * reply), or why it is not one.
 */
export async function lookupBrowserSession(
  db: Db,
  secret: string,
  idleMs: number,
  now = Date.now(),
): Promise<SessionLookup> {
  const hash = await sha256Hex(secret);
  let hit = cache.get(hash, now);
  if (!hit) {
    const row = await db
      .prepare(
        `SELECT s.id, s.org, s.user_id, s.scopes, s.via, s.api_key_id, s.expires_at, s.idle_until, s.ended_at,
           u.disabled_at, (k.id IS NOT NULL AND k.revoked_at IS NULL) AS key_live, k.scopes AS key_scopes
         FROM browser_sessions s LEFT JOIN users u ON u.org = s.org AND u.id = s.user_id
         LEFT JOIN api_keys k ON k.id = s.api_key_id WHERE s.secret_hash = ?`,
      )
      .bind(hash)
      .first();
    if (!row) return { ok: false, reason: "unknown" };
    const r = SessionRow.parse(row);
    if (r.disabled_at !== null) return { ok: false, reason: "user_disabled" };
    hit = {
      principal: {
        // Signed in with a key: its calls count against the key; by single sign-on, against the person.
        keyId: r.api_key_id ?? `user:${r.user_id}`,
        credentialId: r.id,
        org: r.org,
        user: r.user_id,
        // A key's session has the key's scopes as they are now (an admin may have narrowed them since).
        scopes: r.key_scopes ? z.array(z.string()).parse(JSON.parse(r.key_scopes)) : r.scopes,
        via: "browser_session",
      },
      expiresAt: Date.parse(r.expires_at),
      idleUntil: Date.parse(r.idle_until),
      // A session signed in with a key ends with the key (revoked; its expiry is the session's own end).
      ended: r.ended_at !== null || (r.api_key_id !== null && r.key_live !== 1),
      idleWrittenAt: Date.parse(r.idle_until) - idleMs,
    };
    cache.set(hash, hit, now + AUTH_CACHE_TTL_MS);
  }
  if (hit.ended) return { ok: false, reason: "ended" };
  if (hit.expiresAt <= now || hit.idleUntil <= now) return { ok: false, reason: "expired" };
  let touch: (() => Promise<void>) | null = null;
  if (now - hit.idleWrittenAt >= IDLE_WRITE_EVERY_MS) {
    const idleUntil = Math.min(now + idleMs, hit.expiresAt);
    hit.idleWrittenAt = now;
    hit.idleUntil = idleUntil;
    const id = hit.principal.credentialId;
    touch = async () => {
      await db
        .prepare("UPDATE browser_sessions SET idle_until = ? WHERE id = ? AND ended_at IS NULL")
        .bind(new Date(idleUntil).toISOString(), id)
        .run();
    };
  }
  return { ok: true, principal: hit.principal, expiresAt: new Date(hit.expiresAt).toISOString(), touch };
}

/** Ends the session whose cookie holds `secret` (sign-out): in D1, and in this isolate at once. */
export async function endBrowserSession(db: Db, secret: string): Promise<void> {
  const hash = await sha256Hex(secret);
  cache.delete(hash);
  await db
    .prepare(
      "UPDATE browser_sessions SET ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE secret_hash = ? AND ended_at IS NULL",
    )
    .bind(hash)
    .run();
}

/** Forgets this isolate's copies of `user`'s sessions (disabled here: refused at once). */
export function forgetSessionsOfUser(org: string, user: string): void {
  cache.deleteWhere(({ principal }) => principal.org === org && principal.user === user);
}

/** Forgets this isolate's copies of the sessions signed in with the key `keyId` (revoked here: refused at once). */
export function forgetSessionsOfKey(keyId: string): void {
  cache.deleteWhere(({ principal }) => principal.keyId === keyId);
}

/** When the browser session `id` ends at the latest (null: no such session). */
export async function sessionExpiry(db: Db, id: string): Promise<string | null> {
  const row = await db.prepare("SELECT expires_at FROM browser_sessions WHERE id = ?").bind(id).first();
  return row ? z.object({ expires_at: z.string() }).parse(row).expires_at : null;
}

/** Ends every live browser session of `user` in `org` at `at` (an ISO time), to batch with the user's change. */
export function endSessionsOfUserStatement(db: Db, org: string, user: string, at: string): D1PreparedStatement {
  return db
    .prepare("UPDATE browser_sessions SET ended_at = ? WHERE org = ? AND user_id = ? AND ended_at IS NULL")
    .bind(at, org, user);
}

/** The scopes `user` signed in with in `org`, over every browser session past or present (JSON arrays), to batch. */
export function sessionScopesStatement(db: Db, org: string, user: string): D1PreparedStatement {
  return db.prepare("SELECT scopes FROM browser_sessions WHERE org = ? AND user_id = ?").bind(org, user);
}

// Refresh token reuse (OAuth 2.1 §4.3.1, RFC 9700 §4.14.2): a refresh token the authorization server rotated away is
// refused, and its second use ends the grant, so a stolen refresh token and the client's own copy cannot both go on.
// The server (@cloudflare/workers-oauth-provider) keeps a grant's previous refresh token valid until the next
// rotation; aptix remembers in D1 the SHA-256 of each refresh token the server took for new tokens, read where it is
// written, and what stands in front of the token endpoint (src/auth/token-endpoint.ts) checks it before the server
// sees one.
import { z } from "zod";
import type { Db } from "../db";
import { sha256Hex } from "../secret-text";

/** The authorization server's ids of a refresh token's grant and user, as the token carries them. */
export interface ServerGrant {
  kvGrantId: string;
  kvUserId: string;
}

/** The grant a refresh token names (`user:grant:secret`), or null for one not so shaped. */
export function serverGrantOf(refreshToken: string): ServerGrant | null {
  const [kvUserId, kvGrantId, secret, ...rest] = refreshToken.split(":");
  if (!kvUserId || !kvGrantId || !secret || rest.length > 0) return null;
  return { kvGrantId, kvUserId };
}

const RotatedRow = z.object({ kv_grant_id: z.string(), kv_user_id: z.string() });

/** The grant of `refreshToken` when the server rotated it away before (this is a second use), else null. */
export async function rotatedAway(db: Db, refreshToken: string): Promise<ServerGrant | null> {
  const row = await db
    .prepare("SELECT kv_grant_id, kv_user_id FROM oauth_rotated_refresh_tokens WHERE token_hash = ?")
    .bind(await sha256Hex(refreshToken))
    .first();
  if (row === null) return null;
  const found = RotatedRow.parse(row);
  return { kvGrantId: found.kv_grant_id, kvUserId: found.kv_user_id };
}

/**
 * Remembers that the server just rotated `refreshToken` away (it gave new tokens for it), and forgets those older
 * than `lifetimeMs` (their grants have expired). False when it was remembered already: two requests used it at once.
 */
export async function rememberRotated(db: Db, refreshToken: string, lifetimeMs: number, now = Date.now()) {
  const grant = serverGrantOf(refreshToken);
  if (!grant) return true;
  const [inserted] = await db.batch([
    db
      .prepare(
        `INSERT INTO oauth_rotated_refresh_tokens (token_hash, kv_grant_id, kv_user_id) VALUES (?, ?, ?)
         ON CONFLICT (token_hash) DO NOTHING`,
      )
      .bind(await sha256Hex(refreshToken), grant.kvGrantId, grant.kvUserId),
    db
      .prepare("DELETE FROM oauth_rotated_refresh_tokens WHERE rotated_at < ?")
      .bind(new Date(now - lifetimeMs).toISOString()),
  ]);
  return (inserted?.meta.changes ?? 0) > 0;
}

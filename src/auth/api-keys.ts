// API keys: hashed with SHA-256 and looked up in D1, with a short in-isolate cache for hot paths.

import { z } from "zod";
import type { Db } from "../db";
import { keptPerIsolate } from "../isolate-cache";
import type { Principal } from "../principal";

const ApiKeyRow = z.object({
  id: z.string(),
  org: z.string().min(1),
  user_id: z.string().min(1),
  scopes: z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text))),
  expires_at: z.string().nullable(),
});

export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * How long an isolate trusts what it read about a key: a key revoked (or changed) elsewhere stops working in
 * every isolate within this bound; in the isolate that revoked it, at once.
 */
export const AUTH_CACHE_TTL_MS = 5_000;
const CACHE_MAX_ENTRIES = 1_000;
const cache = new Map<string, { principal: Principal; keyExpiresAt: number | null; cachedUntil: number }>();
keptPerIsolate(() => cache.clear());

/** What a key stands for, or why it does not: unknown (or revoked), or past its expiry. */
export type Authentication = { ok: true; principal: Principal } | { ok: false; reason: "unknown" | "expired" };

/** Known keys only are cached (a new key works at once; a revoked one stops within AUTH_CACHE_TTL_MS). */
export async function authenticateApiKey(db: Db, key: string, now = Date.now()): Promise<Authentication> {
  const keyHash = await hashApiKey(key);
  let hit = cache.get(keyHash);
  if (hit && hit.cachedUntil <= now) {
    cache.delete(keyHash);
    hit = undefined;
  }
  if (!hit) {
    const row = await db
      .prepare("SELECT id, org, user_id, scopes, expires_at FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL")
      .bind(keyHash)
      .first();
    if (!row) return { ok: false, reason: "unknown" };
    const parsed = ApiKeyRow.parse(row);
    hit = {
      principal: { keyId: parsed.id, org: parsed.org, user: parsed.user_id, scopes: parsed.scopes },
      keyExpiresAt: parsed.expires_at ? Date.parse(parsed.expires_at) : null,
      cachedUntil: now + AUTH_CACHE_TTL_MS,
    };
    if (cache.size >= CACHE_MAX_ENTRIES) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(keyHash, hit);
  }
  if (hit.keyExpiresAt !== null && hit.keyExpiresAt <= now) return { ok: false, reason: "expired" };
  return { ok: true, principal: hit.principal };
}

/** Forgets what this isolate knows of the key `keyId` (revoked or changed here: it takes effect at once). */
export function forgetApiKey(keyId: string): void {
  for (const [hash, entry] of cache) if (entry.principal.keyId === keyId) cache.delete(hash);
}

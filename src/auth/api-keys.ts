// API keys: hashed with SHA-256 and looked up in D1, with a short in-isolate cache for hot paths.
import { z } from "zod";

export const SCOPES = ["chat", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** Who a request acts for, from its key. Sessions belong to `org`. */
export interface Principal {
  keyId: string;
  org: string;
  user: string;
  scopes: readonly string[];
}

const ApiKeyRow = z.object({
  id: z.string(),
  org: z.string().min(1),
  user_id: z.string().min(1),
  scopes: z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text))),
});

export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX_ENTRIES = 1_000;
const cache = new Map<string, { principal: Principal; expiresAt: number }>();

/** Known keys only are cached (a new key works at once; a revoked one stops within CACHE_TTL_MS). */
export async function authenticateApiKey(db: D1Database, key: string): Promise<Principal | null> {
  const keyHash = await hashApiKey(key);
  const now = Date.now();
  const hit = cache.get(keyHash);
  if (hit && hit.expiresAt > now) return hit.principal;
  if (hit) cache.delete(keyHash);

  const row = await db
    .prepare("SELECT id, org, user_id, scopes FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL")
    .bind(keyHash)
    .first();
  if (!row) return null;
  const parsed = ApiKeyRow.parse(row);
  const principal: Principal = { keyId: parsed.id, org: parsed.org, user: parsed.user_id, scopes: parsed.scopes };
  if (cache.size >= CACHE_MAX_ENTRIES) {
    const oldest = cache.keys().next();
    if (!oldest.done) cache.delete(oldest.value);
  }
  cache.set(keyHash, { principal, expiresAt: now + CACHE_TTL_MS });
  return principal;
}

// The people of an org: a user row per person, written the first time they are seen (by key, browser session,
// OAuth token or Access) and touched again at most once a minute per isolate, off the reply path. Disabling a
// user refuses their keys and ends their browser sessions and OAuth grants.
import { z } from "zod";
import type { Db } from "../db";
import { ExpiringMap } from "../isolate-cache";
import type { Principal, Via } from "../principal";
import { AUTH_CACHE_TTL_MS, liveKeyScopesStatement, StoredScopes } from "./api-keys";
import { endSessionsOfUserStatement, sessionScopesStatement } from "./browser-sessions";

/** How often an isolate writes a user's last_seen_at (a request more often is not written again). */
export const LAST_SEEN_EVERY_MS = 60_000;
/** The users this isolate wrote as seen, each until LAST_SEEN_EVERY_MS after the write. */
const recentlyWritten = new ExpiringMap<string, true>(10_000);

const seenKey = (org: string, user: string) => `${org}\u0000${user}`;

/**
 * The write that records `principal`'s user as seen now, or null when this isolate wrote it less than
 * LAST_SEEN_EVERY_MS ago. The caller runs it after the reply (waitUntil).
 */
export function noteSeen(db: Db, principal: Principal, now = Date.now()): (() => Promise<void>) | null {
  const key = seenKey(principal.org, principal.user);
  if (recentlyWritten.get(key, now)) return null;
  recentlyWritten.set(key, true, now + LAST_SEEN_EVERY_MS);
  return async () => {
    await db
      .prepare(
        `INSERT INTO users (org, id, last_seen_via) VALUES (?, ?, ?)
         ON CONFLICT (org, id) DO UPDATE SET last_seen_at = excluded.last_seen_at, last_seen_via = excluded.last_seen_via`,
      )
      .bind(principal.org, principal.user, principal.via)
      .run();
  };
}

/** What an isolate read of users' disabled state, for AUTH_CACHE_TTL_MS (as for keys). */
const disabledState = new ExpiringMap<string, boolean>(10_000);

const DisabledRow = z.object({ disabled_at: z.string().nullable() }).transform((r) => ({ disabledAt: r.disabled_at }));
const ScopesRow = z.object({ scopes: StoredScopes });

/** Whether `user` of `org` is disabled (for a way in that has no row of its own to join: Cloudflare Access). */
export async function isUserDisabled(db: Db, org: string, user: string, now = Date.now()): Promise<boolean> {
  const key = seenKey(org, user);
  const hit = disabledState.get(key, now);
  if (hit !== undefined) return hit;
  const row = await db.prepare("SELECT disabled_at FROM users WHERE org = ? AND id = ?").bind(org, user).first();
  const disabled = row !== null && DisabledRow.parse(row).disabledAt !== null;
  disabledState.set(key, disabled, now + AUTH_CACHE_TTL_MS);
  return disabled;
}

/** Forgets what this isolate read of `user`'s disabled state (disabled or enabled here: at once). */
export function forgetUserState(org: string, user: string): void {
  disabledState.delete(seenKey(org, user));
}

/** Records a signed-in person with the name and email their identity provider gave; their disabled_at stays. */
export async function upsertUser(
  db: Db,
  user: { org: string; id: string; email: string | null; name: string | null; via: Via },
): Promise<{ disabled: boolean }> {
  const row = await db
    .prepare(
      `INSERT INTO users (org, id, email, name, last_seen_via) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (org, id) DO UPDATE SET email = COALESCE(excluded.email, email), name = COALESCE(excluded.name, name),
         last_seen_at = excluded.last_seen_at, last_seen_via = excluded.last_seen_via
       RETURNING disabled_at`,
    )
    .bind(user.org, user.id, user.email, user.name, user.via)
    .first();
  const now = Date.now();
  recentlyWritten.set(seenKey(user.org, user.id), true, now + LAST_SEEN_EVERY_MS);
  return { disabled: row !== null && DisabledRow.parse(row).disabledAt !== null };
}

export const UserView = z
  .object({
    id: z.string(),
    email: z.string().nullable(),
    name: z.string().nullable(),
    firstSeenAt: z.string(),
    lastSeenAt: z.string(),
    lastSeenVia: z.string().nullable(),
    disabled: z.boolean(),
    disabledAt: z.string().nullable(),
  })
  .meta({ id: "User" });
export type UserView = z.infer<typeof UserView>;

const UserRow = z.object({
  id: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  first_seen_at: z.string(),
  last_seen_at: z.string(),
  last_seen_via: z.string().nullable(),
  disabled_at: z.string().nullable(),
});

function viewOf(row: unknown): UserView {
  const r = UserRow.parse(row);
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    firstSeenAt: r.first_seen_at,
    lastSeenAt: r.last_seen_at,
    lastSeenVia: r.last_seen_via,
    disabled: r.disabled_at !== null,
    disabledAt: r.disabled_at,
  };
}

const USER_COLUMNS = "id, email, name, first_seen_at, last_seen_at, last_seen_via, disabled_at";

/** The org's users, most recently seen first. */
export async function listUsers(db: Db, org: string): Promise<UserView[]> {
  const { results } = await db
    .prepare(`SELECT ${USER_COLUMNS} FROM users WHERE org = ? ORDER BY last_seen_at DESC, id`)
    .bind(org)
    .all();
  return results.map(viewOf);
}

export async function findUser(db: Db, org: string, id: string): Promise<UserView | null> {
  const row = await db.prepare(`SELECT ${USER_COLUMNS} FROM users WHERE org = ? AND id = ?`).bind(org, id).first();
  return row ? viewOf(row) : null;
}

/**
 * Disables (or enables again) a user of `org`; disabling ends their browser sessions in the same batch, with `also`
 * (its audit row). A user not seen yet (a key acts for them) gets their row, disabled.
 */
export async function setUserDisabled(
  db: Db,
  org: string,
  id: string,
  disabled: boolean,
  also: D1PreparedStatement[] = [],
): Promise<D1Result[]> {
  const now = new Date().toISOString();
  const statements = [
    db
      .prepare(
        `INSERT INTO users (org, id, disabled_at) VALUES (?, ?, ?)
         ON CONFLICT (org, id) DO UPDATE SET disabled_at = excluded.disabled_at`,
      )
      .bind(org, id, disabled ? now : null),
  ];
  if (disabled) {
    statements.push(endSessionsOfUserStatement(db, org, id, now));
  }
  return db.batch([...statements, ...also]);
}

/**
 * The user is an operator: a live key of theirs carries the `operator` scope, or they signed in as one (a browser
 * session, past or present, with it: single sign-on's OIDC_OPERATOR_GROUPS). Only an operator changes an operator.
 */
export async function isOperatorUser(db: Db, org: string, user: string): Promise<boolean> {
  // One round trip: each table's own query, batched.
  const answers = await db.batch([liveKeyScopesStatement(db, org, user), sessionScopesStatement(db, org, user)]);
  return answers.some(({ results }) => results.some((row) => ScopesRow.parse(row).scopes.includes("operator")));
}

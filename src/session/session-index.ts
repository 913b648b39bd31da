// The index of sessions by org (D1 `session_index`): written when a session's object is created and after
// each change of its status, mode or title (by the object, off the reply path); read to list a caller's
// sessions (GET /context/sessions, the console's sidebar) and an org's recent ones (the MCP door's resources).
// A person renames and archives a session here (a title they chose is never replaced by the automatic one); a
// deleted session's row is deleted. The session itself lives in its object; this is only the index, and may lag
// the object by a moment.
import { z } from "zod";
import type { Db } from "../db";
import type { AdminLogger } from "../observability/admin-logger";
import { unindexSessionMessages } from "../search/message-index";
import { asTypedName } from "../typed-name";
import type { BranchOrigin, SessionListEntry } from "../wire/session";
import { SessionStatus } from "../wire/turn";
import { deleteSessionResponses } from "./response-store";

export interface IndexedSession {
  sessionId: string;
  mode: string;
  createdAt: string;
}

/** A title's longest length, in characters (a longer first message is cut at a word, with an ellipsis). */
export const TITLE_CHARS = 80;

/**
 * A session's title from its first message: one line, at most TITLE_CHARS, without what a typed name refuses (a
 * message may hold anything: here it is taken out, not refused).
 */
export function sessionTitle(firstMessage: string): string {
  const line = asTypedName(firstMessage).replace(/\s+/g, " ").trim();
  if (line.length <= TITLE_CHARS) return line;
  // Not half of a surrogate pair.
  const cut = line.slice(0, TITLE_CHARS - 1).replace(/[\uD800-\uDBFF]$/, "");
  const space = cut.lastIndexOf(" ");
  return `${(space > TITLE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/**
 * Records a new session; a failure is logged, never thrown (the session exists without its index row). `copyRead`
 * (a read of the owner's memories for the session's copy, src/session/memory-copy.ts) rides the same batch, the row
 * stamped `memory_copy_at` with its time, so a writer of a memory finds the session to tell; answers the read's
 * results and whether the row was written (null when nothing was, or nothing was read).
 */
export async function indexSession(
  db: Db,
  session: {
    sessionId: string;
    org: string;
    user: string;
    mode: string;
    parentSessionId: string | null;
    branchOf?: BranchOrigin | null;
    /** A branch's title from the first message it was seeded with (others get theirs from their first turn). */
    title?: string | null;
  },
  logger: AdminLogger,
  copyRead?: { at: string; statements: readonly D1PreparedStatement[] },
): Promise<{ inserted: boolean; alongside: D1Result[] } | null> {
  try {
    const insert = db
      .prepare(
        `INSERT OR IGNORE INTO session_index (session_id, org, user_id, mode, parent_session_id, branch_of_session_id,
           branch_before_seq, title, updated_at, memory_copy_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?)`,
      )
      .bind(
        session.sessionId,
        session.org,
        session.user,
        session.mode,
        session.parentSessionId,
        session.branchOf?.sessionId ?? null,
        session.branchOf?.beforeMessage ?? null,
        session.title ?? null,
        copyRead?.at ?? null,
      );
    if (!copyRead) {
      await insert.run();
      return null;
    }
    const [inserted, ...alongside] = await db.batch([insert, ...copyRead.statements]);
    return { inserted: (inserted?.meta.changes ?? 0) > 0, alongside };
  } catch (error) {
    logger.addException("[session_index]", error, [["SessionId", session.sessionId]]);
    return null;
  }
}

/** What the list shows of a session now, and the object's newest frame seq when it was so. */
export interface SessionIndexUpdate {
  sessionId: string;
  mode: string;
  status: string;
  waitingForUser: boolean;
  title: string | null;
  updatedAt: string;
  seq: number;
  /** Stamps `memory_copy_at` (never moving it back) when the batch also reads the session's copy of the memories. */
  memoryCopyAt?: string | null;
}

/**
 * The statement that writes a session's list entry, unless a newer one (a higher seq) is there already; the automatic
 * title is kept once set, and never replaces a title a person chose.
 */
export function sessionIndexUpdate(db: Db, entry: SessionIndexUpdate): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE session_index SET mode = ?1, status = ?2, waiting_for_user = ?3,
         title = CASE WHEN title_set_by_user = 1 THEN title ELSE COALESCE(title, ?4) END,
         updated_at = ?5, index_seq = ?6,
         memory_copy_at = CASE WHEN ?8 IS NULL THEN memory_copy_at ELSE MAX(COALESCE(memory_copy_at, ''), ?8) END
       WHERE session_id = ?7 AND index_seq < ?6`,
    )
    .bind(
      entry.mode,
      entry.status,
      entry.waitingForUser ? 1 : 0,
      entry.title,
      entry.updatedAt,
      entry.seq,
      entry.sessionId,
      entry.memoryCopyAt ?? null,
    );
}

/**
 * Writes a session's list entry (sessionIndexUpdate) with `alongside` in the same batch (the search index's feed, the
 * read of the session's copy of its owner's memories). A failure is logged, never thrown: the list lags until the
 * session's next change. When the batch was written: whether the entry took this write (false when the session has
 * no entry, or a newer write is there), and the results of `alongside`, in order; else null.
 */
export async function updateSessionIndex(
  db: Db,
  entry: SessionIndexUpdate,
  logger: AdminLogger,
  alongside: readonly D1PreparedStatement[] = [],
): Promise<{ entryWritten: boolean; alongside: D1Result[] } | null> {
  try {
    const [written, ...rest] = await db.batch([sessionIndexUpdate(db, entry), ...alongside]);
    return { entryWritten: (written?.meta.changes ?? 0) > 0, alongside: rest };
  } catch (error) {
    logger.addException("[session_index]", error, [["SessionId", entry.sessionId]]);
    return null;
  }
}

/**
 * The sessions of `user` in `org` (every member's when `user` is null) whose copy of the memories was read at or after
 * `since` (ISO), newest first, at most `limit`: those that may hold a copy now (src/session/memory-notify.ts).
 */
export async function sessionsHoldingCopySince(
  db: Db,
  org: string,
  user: string | null,
  since: string,
  limit: number,
): Promise<{ sessionId: string; user: string }[]> {
  const { results } = await db
    .prepare(
      `SELECT session_id, user_id FROM session_index
       WHERE org = ?1 AND memory_copy_at IS NOT NULL AND memory_copy_at >= ?3 AND (?2 IS NULL OR user_id = ?2)
       ORDER BY memory_copy_at DESC LIMIT ?4`,
    )
    .bind(org, user, since, limit)
    .all<{ session_id: string; user_id: string }>();
  return results.map((row) => ({ sessionId: row.session_id, user: row.user_id }));
}

/**
 * For the batch that reads a session's copy of the memories: stamps the entry with the read's time (never moving it
 * back) and returns one row when the session has an entry, none when it has not (src/session/memory-copy.ts).
 */
export function memoryCopyStampStatement(db: Db, sessionId: string, at: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE session_index SET memory_copy_at = MAX(COALESCE(memory_copy_at, ''), ?2) WHERE session_id = ?1
       RETURNING 1 AS listed`,
    )
    .bind(sessionId, at);
}

const ListRow = z.object({
  session_id: z.string(),
  mode: z.string(),
  status: SessionStatus,
  waiting_for_user: z.number().transform((n) => n === 1),
  title: z.string().nullable(),
  title_set_by_user: z.number().transform((n) => n === 1),
  archived_at: z.string().nullable(),
  parent_session_id: z.string().nullable(),
  branch_of_session_id: z.string().nullable(),
  branch_before_seq: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string().nullable(),
});

const LIST_COLUMNS = `session_id, mode, status, waiting_for_user, title, title_set_by_user, archived_at,
  parent_session_id, branch_of_session_id, branch_before_seq, created_at, COALESCE(updated_at, created_at) AS updated_at`;

function entryOfRow(row: unknown): SessionListEntry {
  const r = ListRow.parse(row);
  return {
    sessionId: r.session_id,
    mode: r.mode,
    status: r.status,
    waitingForUser: r.waiting_for_user,
    title: r.title,
    titleSetByUser: r.title_set_by_user,
    archivedAt: r.archived_at,
    parentSessionId: r.parent_session_id,
    branchOf:
      r.branch_of_session_id === null || r.branch_before_seq === null
        ? null
        : { sessionId: r.branch_of_session_id, beforeMessage: r.branch_before_seq },
    createdAt: r.created_at,
    updatedAt: r.updated_at ?? r.created_at,
  };
}

/** `text` as a LIKE pattern that matches it anywhere, its own wildcards (and the escape) taken literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Where a page of the list ends: the last entry's updated-at and id (newest first, the id breaks ties). */
const Cursor = z.tuple([z.string(), z.string()]);

export function encodeCursor(entry: SessionListEntry): string {
  // base64url: safe in a query string as it is.
  return btoa(JSON.stringify([entry.updatedAt, entry.sessionId]))
    .replace(/=+$/, "")
    .replaceAll("+", "-")
    .replaceAll("/", "_");
}

/** The cursor's position, or null when it is not one of ours. */
export function decodeCursor(cursor: string): [string, string] | null {
  try {
    const parsed = Cursor.safeParse(JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/"))));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Which of a user's sessions a list shows: archived ones or the others; those whose title contains `query`. */
export interface ListFilter {
  archived: boolean;
  /** Case-insensitive (ASCII letters), anywhere in the title; null: every title, and sessions without one. */
  query: string | null;
  /** Only the branches a person started from this session; null: every session. */
  branchOf?: string | null;
}

/** A user's sessions in an org, newest change first: up to `limit`, after `after` (a decoded cursor). */
export async function listSessions(
  db: Db,
  owner: { org: string; user: string },
  page: { limit: number; after: [string, string] | null },
  filter: ListFilter = { archived: false, query: null },
): Promise<{ sessions: SessionListEntry[]; more: boolean }> {
  const [afterAt, afterId] = page.after ?? [null, null];
  const pattern = filter.query === null ? null : containsPattern(filter.query);
  const { results } = await db
    .prepare(
      // A row written before migration 0013's backfill by an older Worker has no updated_at: its created_at stands in.
      `SELECT ${LIST_COLUMNS}
       FROM session_index WHERE org = ? AND user_id = ? AND (archived_at IS NOT NULL) = ?
         AND (? IS NULL OR title LIKE ? ESCAPE '\\')
         AND (? IS NULL OR branch_of_session_id = ?)
         AND (? IS NULL OR COALESCE(updated_at, created_at) < ?
              OR (COALESCE(updated_at, created_at) = ? AND session_id < ?))
       ORDER BY COALESCE(updated_at, created_at) DESC, session_id DESC LIMIT ?`,
    )
    .bind(
      owner.org,
      owner.user,
      filter.archived ? 1 : 0,
      pattern,
      pattern,
      filter.branchOf ?? null,
      filter.branchOf ?? null,
      afterAt,
      afterAt,
      afterAt,
      afterId,
      page.limit + 1,
    )
    .all();
  const sessions = results.slice(0, page.limit).map(entryOfRow);
  return { sessions, more: results.length > page.limit };
}

/** One session's list entry, or null when it has none (deleted, or its index row was never written). */
export async function sessionEntry(db: Db, sessionId: string): Promise<SessionListEntry | null> {
  const row = await db
    .prepare(`SELECT ${LIST_COLUMNS} FROM session_index WHERE session_id = ?`)
    .bind(sessionId)
    .first();
  return row ? entryOfRow(row) : null;
}

/** What a person changes of a session's entry: a title they chose (null: the automatic one again), archived. */
export interface EntryChange {
  /** The title a person chose; null gives the session its automatic title (`automaticTitle`) back. */
  title?: string | null;
  archived?: boolean;
}

/** Applies a person's change to the session's entry, in one statement (a row written before has it all or none). */
export async function changeSessionEntry(
  db: Db,
  sessionId: string,
  change: EntryChange,
  automaticTitle: string | null,
): Promise<void> {
  const sets: string[] = [];
  const values: (string | number | null)[] = [];
  if (change.title !== undefined) {
    sets.push("title = ?", "title_set_by_user = ?");
    values.push(change.title ?? automaticTitle, change.title === null ? 0 : 1);
  }
  if (change.archived !== undefined) {
    // Archiving an archived session keeps when it was archived first.
    sets.push(change.archived ? "archived_at = COALESCE(archived_at, ?)" : "archived_at = NULL");
    if (change.archived) values.push(new Date().toISOString());
  }
  if (sets.length === 0) return;
  await db
    .prepare(`UPDATE session_index SET ${sets.join(", ")} WHERE session_id = ?`)
    .bind(...values, sessionId)
    .run();
}

/**
 * A deleted session leaves the index and takes its kept responses (the Responses door's, which hold its text) and
 * its messages' rows in the search index (migration 0032) with it, in one batch. Its usage rows and its head on the
 * agent's door (a fingerprint, no text) stay: a client that resends the deleted conversation's history is told the
 * session is gone rather than starting it again.
 */
export async function unindexSession(db: Db, sessionId: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM session_index WHERE session_id = ?").bind(sessionId),
    deleteSessionResponses(db, sessionId),
    unindexSessionMessages(db, sessionId),
  ]);
}

/** How many sessions `user` has in `org`, and the ids of up to `limit` of them (a person being deleted). */
export async function sessionsOfUser(
  db: Db,
  org: string,
  user: string,
  limit: number,
): Promise<{ count: number; ids: string[] }> {
  const [count, ids] = await db.batch([
    db.prepare("SELECT COUNT(*) AS n FROM session_index WHERE org = ? AND user_id = ?").bind(org, user),
    db.prepare("SELECT session_id FROM session_index WHERE org = ? AND user_id = ? LIMIT ?").bind(org, user, limit),
  ]);
  return {
    count: z.object({ n: z.number() }).parse(count?.results[0]).n,
    ids: (ids?.results ?? []).map((r) => z.object({ session_id: z.string() }).parse(r).session_id),
  };
}

/** The ids of sessions idle since before `cutoff` (an ISO time), the longest idle first, at most `limit`. */
export async function idleSessions(db: Db, cutoff: string, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT session_id FROM session_index WHERE COALESCE(updated_at, created_at) < ?
       ORDER BY COALESCE(updated_at, created_at) LIMIT ?`,
    )
    .bind(cutoff, limit)
    .all();
  return results.map((r) => z.object({ session_id: z.string() }).parse(r).session_id);
}

/** The index's idle time of a session the object found newer (the index lagged): retention skips it next time. */
export async function touchSessionEntry(db: Db, sessionId: string, updatedAt: string): Promise<void> {
  await db
    .prepare("UPDATE session_index SET updated_at = ? WHERE session_id = ? AND COALESCE(updated_at, created_at) < ?")
    .bind(updatedAt, sessionId, updatedAt)
    .run();
}

const RecentRow = z
  .object({ session_id: z.string(), mode: z.string(), created_at: z.string() })
  .transform((r): IndexedSession => ({ sessionId: r.session_id, mode: r.mode, createdAt: r.created_at }));

/** The newest sessions of one person (the MCP door's resources: "your sessions", whatever their role). */
export async function recentSessions(
  db: Db,
  owner: { org: string; user: string },
  limit = 50,
): Promise<IndexedSession[]> {
  const { results } = await db
    .prepare(
      "SELECT session_id, mode, created_at FROM session_index WHERE org = ? AND user_id = ? ORDER BY created_at DESC LIMIT ?",
    )
    .bind(owner.org, owner.user, limit)
    .all();
  return results.map((r) => RecentRow.parse(r));
}

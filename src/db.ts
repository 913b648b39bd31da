// D1 through its Sessions API: every request reads through one session of the database, so a deployment with
// read replication reads from the nearest replica; a client that carries the bookmark of its last answer
// (the X-D1-Bookmark header) reads at least what that answer had seen, its own writes included.

/** What reads and writes need of D1: the database itself, or one session of it. */
export type Db = Pick<D1Database, "prepare" | "batch">;

/** The header a bookmark travels in, both ways. */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** A bookmark as D1 writes them (four hex groups); anything else is refused, not passed to D1. */
export const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** The newer of two bookmarks (D1's bookmarks sort as text); null when neither is known. */
export function newerBookmark(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a >= b ? a : b;
}

/** A session of `db` that starts at `bookmark` (reads at least as new), or anywhere without one. */
export function dbSession(db: D1Database, bookmark: string | null | undefined): D1DatabaseSession {
  return db.withSession(bookmark || "first-unconstrained");
}

/**
 * A long-lived reader's D1 (a session object's): one session of the database, moved on to the newest
 * bookmark its callers carried, so it reads at least what each caller's request had seen.
 */
export class BookmarkedDb implements Db {
  private bookmark: string | null = null;
  private session: D1DatabaseSession;

  constructor(private readonly db: D1Database) {
    this.session = dbSession(db, null);
  }

  /** Reads from here on are at least as new as `bookmark` (an older or missing one changes nothing). */
  advance(bookmark: string | null | undefined): void {
    // The session already reads at least as new as what it has seen (its own writes included).
    const seen = newerBookmark(this.bookmark, this.session.getBookmark());
    if (!bookmark || (seen && seen >= bookmark)) return;
    this.bookmark = bookmark;
    this.session = dbSession(this.db, bookmark);
  }

  prepare(query: string): D1PreparedStatement {
    return this.session.prepare(query);
  }

  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return this.session.batch<T>(statements);
  }
}

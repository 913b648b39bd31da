// MemoryStore: one person's memories and their org's, in D1 (migrations/0031_memories.sql), as that person sees and
// changes them: their own (scope `user`) and their org's (scope `org`, changed by an org admin only). The one module
// with the SQL of `memories`. A save that repeats or corrects a memory updates it (memory-match.ts); searches and
// recall rank by the FTS5 index the table's triggers keep. docs/memory.md.
import { z } from "zod";
import type { Db } from "../db";
import { type Memory, type MemoryScope, type MemorySource, MemoryText } from "../wire/memory";
import { firstProblem } from "../zod-issues";
import { allWordsQuery, anyWordQuery, sameFact } from "./memory-match";

/** The memories one person may have, and their org (MEMORY_MAX_PER_USER's default). */
export const DEFAULT_MEMORY_MAX_PER_USER = 1_000;

/** A save that matches one of these many candidates (the best-ranked sharing a word) may update it. */
const MATCH_CANDIDATES = 50;

/** Why a store refused: the code the HTTP layer maps (src/errors.ts), the message, the field it is about. */
export class MemoryProblem extends Error {
  constructor(
    readonly code: "memory_not_found" | "memory_limit_reached" | "insufficient_scope" | "invalid_request",
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "MemoryProblem";
  }
}

export interface MemoryStoreOptions {
  /** The caller administers the org: may write, change and remove its org memories. */
  admin?: boolean;
  /** MEMORY_MAX_PER_USER: the most memories the person may have, and the org. */
  maxPerUser?: number;
  /** The clock, for the timestamps. */
  now?: () => number;
}

export interface SaveInput {
  text: string;
  source: MemorySource | null;
  pinned?: boolean;
  scope?: MemoryScope;
  /** The id of a memory this one corrects: that memory is updated. */
  replaces?: string;
}

export interface SaveResult {
  outcome: "added" | "updated";
  memory: Memory;
  previous: string | null;
}

const MemoryRow = z
  .object({
    seq: z.number(),
    id: z.string(),
    scope: z.enum(["user", "org"]),
    text: z.string(),
    pinned: z.number(),
    source_session: z.string().nullable(),
    source_turn: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform((row) => ({
    seq: row.seq,
    memory: {
      id: row.id,
      text: row.text,
      scope: row.scope,
      source:
        row.source_session !== null && row.source_turn !== null
          ? { sessionId: row.source_session, turnId: row.source_turn }
          : null,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      pinned: row.pinned === 1,
    } satisfies Memory,
  }));
type Stored = z.output<typeof MemoryRow>;

/** A row of `visibleMemoriesStatement` as a memory. */
export function parseMemoryRow(row: unknown): Memory {
  return MemoryRow.parse(row).memory;
}

const COLUMNS = "m.seq, m.id, m.scope, m.text, m.pinned, m.source_session, m.source_turn, m.created_at, m.updated_at";
/** The memories the person sees: their own, and their org's (user_id ''). ?1 the org, ?2 the person. */
const VISIBLE = "m.org = ?1 AND m.user_id IN (?2, '')";
const NEWEST = "ORDER BY m.updated_at DESC, m.seq DESC";

/** A page's position: after this row of the newest-first list, or (a search's pages) after this many. */
const Cursor = z.union([z.object({ u: z.string(), s: z.number().int() }), z.object({ o: z.number().int().min(0) })]);
type Cursor = z.infer<typeof Cursor>;

function encodeCursor(cursor: Cursor): string {
  return btoa(JSON.stringify(cursor)).replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_");
}

function decodeCursor(text: string): Cursor {
  try {
    const parsed = Cursor.safeParse(JSON.parse(atob(text.replaceAll("-", "+").replaceAll("_", "/"))));
    if (parsed.success) return parsed.data;
  } catch {
    // Not base64 or not JSON: not a cursor of ours, refused below.
  }
  throw new MemoryProblem("invalid_request", "Invalid 'cursor': use the nextCursor of the previous page.", "cursor");
}

/** Text read as a memory's: trimmed and checked, or refused naming the field. */
export function memoryText(text: string, param = "text"): string {
  const parsed = MemoryText.safeParse(text);
  if (parsed.success) return parsed.data;
  throw new MemoryProblem("invalid_request", `Invalid '${param}': ${firstProblem(parsed.error).detail}.`, param);
}

/**
 * The statement that forgets every memory of `user`'s own in `org` (a disabled person forgotten: PATCH
 * /admin/users/{id} with `forget`), for the batch that also disables them; it returns one row a memory.
 */
export function forgetPersonStatement(db: Db, org: string, user: string): D1PreparedStatement {
  return db.prepare("DELETE FROM memories WHERE org = ? AND user_id = ? RETURNING seq").bind(org, user);
}

/**
 * The statement that reads every memory `user` sees in `org` (their own and the org's), newest change first, at most
 * `limit`: a session's copy of them (memory-copy.ts) is read with it, in its list entry's batch.
 */
export function visibleMemoriesStatement(db: Db, org: string, user: string, limit: number): D1PreparedStatement {
  return db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE ${VISIBLE} ${NEWEST} LIMIT ?3`).bind(org, user, limit);
}

export function newMemoryId(): string {
  return `mem_${crypto.randomUUID().replaceAll("-", "")}`;
}

export class MemoryStore {
  private readonly admin: boolean;
  private readonly maxPerUser: number;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly org: string,
    private readonly user: string,
    options: MemoryStoreOptions = {},
  ) {
    this.admin = options.admin ?? false;
    this.maxPerUser = options.maxPerUser ?? DEFAULT_MEMORY_MAX_PER_USER;
    this.now = options.now ?? Date.now;
  }

  /** A page of the memories the person sees, newest change first; with `q`, those with every word of it, best first. */
  async list(options: { q?: string; limit: number; cursor?: string }): Promise<{
    memories: Memory[];
    nextCursor: string | null;
  }> {
    const cursor = options.cursor === undefined ? null : decodeCursor(options.cursor);
    const limit = options.limit;
    if (options.q !== undefined) {
      const match = searchQuery(options.q, allWordsQuery);
      const offset = cursor && "o" in cursor ? cursor.o : 0;
      const rows = await this.matching(match, limit + 1, offset);
      const more = rows.length > limit;
      return {
        memories: rows.slice(0, limit).map((row) => row.memory),
        nextCursor: more ? encodeCursor({ o: offset + limit }) : null,
      };
    }
    const after = cursor && "u" in cursor ? cursor : null;
    const { results } = await this.db
      .prepare(
        `SELECT ${COLUMNS} FROM memories m WHERE ${VISIBLE}
           ${after ? "AND (m.updated_at < ?3 OR (m.updated_at = ?3 AND m.seq < ?4))" : ""} ${NEWEST} LIMIT ?5`,
      )
      .bind(this.org, this.user, after?.u ?? "", after?.s ?? 0, limit + 1)
      .all();
    const rows = results.map((row) => MemoryRow.parse(row));
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return {
      memories: rows.slice(0, limit).map((row) => row.memory),
      nextCursor: last ? encodeCursor({ u: last.memory.updatedAt, s: last.seq }) : null,
    };
  }

  /** The memory, when the person sees it (their own or their org's); else null. */
  async get(id: string): Promise<Memory | null> {
    return (await this.stored(id))?.memory ?? null;
  }

  /**
   * Adds the memory, or updates the one it repeats or corrects: the one `replaces` names, one of the same
   * normalised text, one stating the same subject with another value, or one whose content words overlap it
   * strongly (memory-match.ts). Among the memories of the same scope the person may change.
   */
  async save(input: SaveInput): Promise<SaveResult> {
    const text = memoryText(input.text);
    const scope = input.scope ?? "user";
    if (scope === "org" && !this.admin) throw orgAdminsOnly();
    const owner = scope === "org" ? "" : this.user;
    const old =
      input.replaces !== undefined ? await this.replaced(input.replaces, scope) : await this.match(text, owner);
    if (old) {
      const memory = await this.write(old, { text, pinned: input.pinned, source: input.source });
      return { outcome: "updated", memory, previous: old.memory.text };
    }
    const count = await this.db
      .prepare("SELECT COUNT(*) AS n FROM memories WHERE org = ? AND user_id = ?")
      .bind(this.org, owner)
      .first<number>("n");
    if ((count ?? 0) >= this.maxPerUser) {
      throw new MemoryProblem(
        "memory_limit_reached",
        scope === "org"
          ? `Your organization has ${this.maxPerUser} memories, the most allowed: forget one first.`
          : `You have ${this.maxPerUser} memories, the most allowed: forget one first.`,
      );
    }
    const at = new Date(this.now()).toISOString();
    const id = newMemoryId();
    const row = await this.db
      .prepare(
        `INSERT INTO memories (id, org, user_id, scope, text, pinned, source_session, source_turn, created_by,
           created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         RETURNING seq, id, scope, text, pinned, source_session, source_turn, created_at, updated_at`,
      )
      .bind(
        id,
        this.org,
        owner,
        scope,
        text,
        input.pinned ? 1 : 0,
        input.source?.sessionId ?? null,
        input.source?.turnId ?? null,
        this.user,
        at,
        at,
      )
      .first();
    return { outcome: "added", memory: MemoryRow.parse(row).memory, previous: null };
  }

  /** Corrects or pins one memory the person may change; null when they see no such memory. */
  async update(id: string, change: { text?: string; pinned?: boolean }): Promise<Memory | null> {
    const old = await this.changeable(id);
    if (!old) return null;
    const text = change.text === undefined ? undefined : memoryText(change.text);
    return this.write(old, { text, pinned: change.pinned });
  }

  /** Forgets one memory the person may change; the memory it was, or null when they see no such memory. */
  async remove(id: string): Promise<Memory | null> {
    const old = await this.changeable(id);
    if (!old) return null;
    await this.db.prepare("DELETE FROM memories WHERE seq = ?").bind(old.seq).run();
    return old.memory;
  }

  /** Every memory of the person's own (never the org's), oldest first: their data export. */
  async own(): Promise<Memory[]> {
    const { results } = await this.db
      .prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.org = ? AND m.user_id = ? ORDER BY m.seq`)
      .bind(this.org, this.user)
      .all();
    return results.map((row) => MemoryRow.parse(row).memory);
  }

  /** Forgets every memory of the person's own (never the org's); how many went. */
  async removeAll(): Promise<number> {
    // Counted from the rows it returns: D1's `changes` counts the index's trigger writes as well.
    const { results } = await forgetPersonStatement(this.db, this.org, this.user).all();
    return results.length;
  }

  /** The memories the person sees that share words with `q`, best first. */
  async search(q: string, limit: number): Promise<Memory[]> {
    return (await this.matching(searchQuery(q, anyWordQuery), limit, 0)).map((row) => row.memory);
  }

  /**
   * What the agent is told about the person for `message`, at most `limit`: pinned memories first (newest first),
   * then the most relevant to the message by FTS5 rank, then the newest. Their own and their org's. Three reads in
   * one round trip.
   */
  async recall(message: string, limit: number): Promise<Memory[]> {
    if (limit <= 0) return [];
    const match = anyWordQuery(message);
    const statements = [
      this.db
        .prepare(`SELECT ${COLUMNS} FROM memories m WHERE ${VISIBLE} AND m.pinned = 1 ${NEWEST} LIMIT ?3`)
        .bind(this.org, this.user, limit),
      this.db
        .prepare(`SELECT ${COLUMNS} FROM memories m WHERE ${VISIBLE} ${NEWEST} LIMIT ?3`)
        .bind(this.org, this.user, limit),
    ];
    if (match) statements.splice(1, 0, this.matchingStatement(match, limit, 0));
    const pages = await this.db.batch(statements);
    const seen = new Set<string>();
    const recalled: Memory[] = [];
    for (const page of pages) {
      for (const row of page.results) {
        const { memory } = MemoryRow.parse(row);
        if (seen.has(memory.id) || recalled.length >= limit) continue;
        seen.add(memory.id);
        recalled.push(memory);
      }
    }
    return recalled;
  }

  private async stored(id: string): Promise<Stored | null> {
    const row = await this.db
      .prepare(`SELECT ${COLUMNS} FROM memories m WHERE ${VISIBLE} AND m.id = ?3`)
      .bind(this.org, this.user, id)
      .first();
    return row ? MemoryRow.parse(row) : null;
  }

  /** A memory the person sees and may change: their own, or the org's for an admin (a member: 403). */
  private async changeable(id: string): Promise<Stored | null> {
    const old = await this.stored(id);
    if (old?.memory.scope === "org" && !this.admin) throw orgAdminsOnly();
    return old;
  }

  /** The memory `replaces` names, when the person may change it and it is of the same scope. */
  private async replaced(id: string, scope: MemoryScope): Promise<Stored> {
    const old = await this.changeable(id);
    if (!old || old.memory.scope !== scope) {
      throw new MemoryProblem("memory_not_found", `Memory '${id.slice(0, 100)}' not found.`, "replaces");
    }
    return old;
  }

  /** The memory of `owner` ('' the org's) that `text` repeats or corrects, the strongest reason first. */
  private async match(text: string, owner: string): Promise<Stored | null> {
    const query = anyWordQuery(text);
    if (!query) return null;
    const { results } = await this.db
      .prepare(
        `SELECT ${COLUMNS} FROM memories_fts f JOIN memories m ON m.seq = f.rowid
         WHERE memories_fts MATCH ?3 AND m.org = ?1 AND m.user_id = ?2 ORDER BY bm25(memories_fts) LIMIT ?4`,
      )
      .bind(this.org, owner, query, MATCH_CANDIDATES)
      .all();
    const candidates = results.map((row) => MemoryRow.parse(row));
    for (const reason of ["duplicate", "contradiction", "overlap"] as const) {
      const found = candidates.find((old) => sameFact(text, old.memory.text) === reason);
      if (found) return found;
    }
    return null;
  }

  private async write(
    old: Stored,
    change: { text?: string | undefined; pinned?: boolean | undefined; source?: MemorySource | null },
  ): Promise<Memory> {
    const at = new Date(this.now()).toISOString();
    const source = change.source === undefined ? old.memory.source : change.source;
    const row = await this.db
      .prepare(
        `UPDATE memories SET text = ?2, pinned = ?3, source_session = ?4, source_turn = ?5, updated_at = ?6
         WHERE seq = ?1 RETURNING seq, id, scope, text, pinned, source_session, source_turn, created_at, updated_at`,
      )
      .bind(
        old.seq,
        change.text ?? old.memory.text,
        (change.pinned ?? old.memory.pinned) ? 1 : 0,
        source?.sessionId ?? null,
        source?.turnId ?? null,
        at,
      )
      .first();
    // Removed between the read and the write (another request forgot it): nothing to update.
    if (!row) throw new MemoryProblem("memory_not_found", `Memory '${old.memory.id}' not found.`);
    return MemoryRow.parse(row).memory;
  }

  private matchingStatement(match: string, limit: number, offset: number): D1PreparedStatement {
    return this.db
      .prepare(
        `SELECT ${COLUMNS} FROM memories_fts f JOIN memories m ON m.seq = f.rowid
         WHERE memories_fts MATCH ?3 AND ${VISIBLE} ORDER BY bm25(memories_fts), m.seq DESC LIMIT ?4 OFFSET ?5`,
      )
      .bind(this.org, this.user, match, limit, offset);
  }

  private async matching(match: string, limit: number, offset: number): Promise<Stored[]> {
    const { results } = await this.matchingStatement(match, limit, offset).all();
    return results.map((row) => MemoryRow.parse(row));
  }
}

function orgAdminsOnly(): MemoryProblem {
  return new MemoryProblem(
    "insufficient_scope",
    "Only an admin of your organization writes or changes its memories.",
    "scope",
  );
}

/** The FTS5 query for a search's words, or a refusal naming `q` when it has none. */
function searchQuery(q: string, make: (text: string) => string | null): string {
  const query = make(q);
  if (query === null) {
    throw new MemoryProblem("invalid_request", "Invalid 'q': must contain a word or a number to search for.", "q");
  }
  return query;
}

// A session's copy of its owner's memories (their own and their org's), so a warm session's turn reads no D1 for
// recall (docs/memory.md, "The session's copy"). The copy is filled only by the session's list-entry write
// (src/session/list-writer.ts), whose D1 batch also stamps the entry's updated_at: the one SELECT rides in that
// batch, so D1 orders it with every memory write, and the stamp tells a writer (memory-notify.ts) which sessions may
// hold a copy older than its change. A copy is used for at most MEMORY_CACHE_TTL_MS after that stamp; a change
// anywhere drops it (AgentSession.memoriesChanged) before the change's answer goes out. A list write reads only for a
// copy older than MEMORY_COPY_REFRESH_MS (or none), so most turns' writes carry no read.
import type { Db } from "../db";
import { words } from "../memory/memory-match";
import { parseMemoryRow, visibleMemoriesStatement } from "../memory/memory-store";
import { MEMORY_RECALL_CAP } from "../prompts/memory-section";
import type { Memory } from "../wire/memory";
import { memoryCopyStampStatement } from "./session-index";

/**
 * How long a copy serves turns after the batch that read it. A notification that fails twice leaves a copy that
 * may show a changed or forgotten memory for at most this long; the writers' search for sessions to tell looks
 * back this long and MEMORY_NOTIFY_SKEW_MS more.
 */
export const MEMORY_CACHE_TTL_MS = 5 * 60_000;

/**
 * How old a copy may be before a list write reads the memories again: younger, the write carries no read, so a warm
 * session's turn makes no D1 read at all (issue 46); older, the write refreshes it well before its life ends, so a
 * session whose turns come less than this far apart never finds its copy expired.
 */
export const MEMORY_COPY_REFRESH_MS = MEMORY_CACHE_TTL_MS / 2;

/** The most memories a copy holds (the recall read's cap): a person who sees more is read from D1 every turn. */
export const MEMORY_COPY_MAX = MEMORY_RECALL_CAP;

interface Copy {
  /** Null: the owner sees more memories than a copy holds (recall reads D1 until `refreshedAt` + the copy's life). */
  memories: Memory[] | null;
  refreshedAt: number;
}

/** A read for the copy, started with a batch: it is kept only if no change was announced meanwhile. */
export interface CopyRead {
  /** For the batch: the memories (after the entry's stamp, when the read carries it). */
  statements: D1PreparedStatement[];
  /**
   * Keeps the batch's results (those of `statements`) as the copy when the session's entry took the read's stamp
   * (`stamped`: given by the caller when the entry's own write carried it) and no change was announced since the read
   * began; returns the memories read, or null when there were more than a copy holds.
   */
  keep(results: readonly D1Result[], stamped?: boolean): Memory[] | null;
}

export class MemoryCopy {
  private copy: Copy | null = null;
  /** Counts the drops: a read that began before a drop is not kept (it may have read what was changed since). */
  private generation = 0;

  /**
   * A read made at `at` (ISO) that stamps the session's entry itself: the stamp (a row when the session has an
   * entry), then all the memories the owner sees (one more than a copy holds). For a turn that finds no valid copy.
   */
  read(db: Db, org: string, user: string, sessionId: string, at: string): CopyRead {
    const read = this.readBesideEntry(db, org, user, at);
    return {
      statements: [memoryCopyStampStatement(db, sessionId, at), ...read.statements],
      keep: ([stamp, ...rest]) => read.keep(rest, (stamp?.results.length ?? 0) > 0),
    };
  }

  /**
   * A read made at `at` (ISO) for the batch that writes the session's list entry, which stamps `memory_copy_at`
   * with the same `at` (sessionIndexUpdate's `memoryCopyAt`): all the memories the owner sees, one more than a copy
   * holds. What lets a writer find this session to tell is that stamp, written in the same batch.
   */
  readBesideEntry(db: Db, org: string, user: string, at: string): CopyRead {
    const generation = this.generation;
    const refreshedAt = Date.parse(at);
    return {
      statements: [visibleMemoriesStatement(db, org, user, MEMORY_COPY_MAX + 1)],
      keep: ([memories], stamped = false) => {
        const rows = memories?.results ?? [];
        const read = rows.length > MEMORY_COPY_MAX ? null : rows.map((row) => parseMemoryRow(row));
        // Not stamped (a session with no entry, or a newer write of the entry there): a writer could not find this
        // read, so it is not kept, and whatever copy the session holds stays as it is. More memories than a copy
        // holds: that is what is kept, and every turn reads D1 as it would without a copy.
        if (stamped && generation === this.generation) this.copy = { memories: read, refreshedAt };
        return read;
      },
    };
  }

  /** A memory of the owner's (or their org's) changed: the copy goes, and a read under way is not kept. */
  drop(): void {
    this.generation++;
    this.copy = null;
  }

  /** When the copy now held was read (ms), or null when there is none. */
  refreshedAt(): number | null {
    return this.copy?.memories ? this.copy.refreshedAt : null;
  }

  /** Whether a copy is held that is younger at `now` than MEMORY_COPY_REFRESH_MS (a list write need not read again). */
  fresh(now: number): boolean {
    const copy = this.copy;
    return copy !== null && copy.memories !== null && now < copy.refreshedAt + MEMORY_COPY_REFRESH_MS;
  }

  /** Whether the last read, still within the copy's life at `now`, found more memories than a copy holds. */
  overflowing(now: number): boolean {
    return this.copy !== null && this.copy.memories === null && now < this.copy.refreshedAt + MEMORY_CACHE_TTL_MS;
  }

  /**
   * What recall would pick for `message` from the copy (at most `limit`: the pinned ones newest first, then those
   * sharing the most words with the message, then the newest), or null when no copy is valid at `now`.
   */
  recall(message: string, limit: number, now: number): Memory[] | null {
    const copy = this.copy;
    if (!copy?.memories || now >= copy.refreshedAt + MEMORY_CACHE_TTL_MS) return null;
    return pickMemories(copy.memories, message, limit);
  }
}

/**
 * Recall's order over memories read whole (newest change first), in code: pinned, then relevance (shared words, as
 * memory-match.ts splits them), then newest; at most `limit`.
 */
export function pickMemories(memories: readonly Memory[], message: string, limit: number): Memory[] {
  if (limit <= 0) return [];
  const asked = new Set(words(message));
  const shared = (memory: Memory) => new Set(words(memory.text).filter((word) => asked.has(word))).size;
  // The copy keeps its read's order: the newest change first (as the store's recall pages are).
  const newest = memories;
  const relevant = newest
    .map((memory) => ({ memory, score: shared(memory) }))
    .filter((scored) => scored.score > 0)
    .sort((a, b) => b.score - a.score) // stable: equal scores stay newest first
    .map((scored) => scored.memory);
  const picked = new Map<string, Memory>();
  for (const memory of [...newest.filter((m) => m.pinned), ...relevant, ...newest]) {
    if (picked.size >= limit) break;
    picked.set(memory.id, memory);
  }
  return [...picked.values()];
}

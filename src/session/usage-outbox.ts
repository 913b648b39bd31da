// The session's usage rows, kept in its own storage until D1 has them, so no row is lost. A model call's row is kept
// in the step that ends the call, before the turn's reply goes out (the object's writes are committed before any of
// its answers leave), and written to D1 in the batch of the session's list entry (src/session/list-writer.ts): a
// turn's end is one D1 write for the entry, the search feed and the usage rows, with no new binding and no queue.
// Should the object stop before that batch, the row stays: the next instance's alarm writes it. Each row carries the
// id it was made with and the insert does nothing for an id D1 has, so a batch that landed but whose end the object
// did not see (the row not yet deleted here) stores nothing twice.

import { type UsageRecord, type UsageRow, UsageRowSchema, usageRow } from "../metering/usage-records";
import type { JsonAdminLogger } from "../observability/admin-logger";

/** How long a kept row may wait for the list write that carries it before the alarm writes it (a stopped object). */
export const USAGE_OUTBOX_GRACE_MS = 60_000;
/** After a failed write (the first, the second, ...; the last repeats), how long until the alarm tries again. */
export const USAGE_RETRY_MS = [30_000, 300_000, 1_800_000] as const;
/** Rows one batch carries at most (D1 runs a batch as one transaction): a longer backlog takes several writes. */
export const USAGE_ROWS_PER_WRITE = 100;

type Row = Record<string, SqlStorageValue>;

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

export interface UsageOutboxDeps {
  sql: SqlStorage;
  logger: JsonAdminLogger;
  /** Asks for the alarm again: the outbox's wish (dueAt) changed. */
  rearm: () => void;
  now?: () => number;
}

export class UsageOutbox {
  private failures = 0;
  /** When the alarm should write what is kept: at once for rows an earlier instance left; else after a grace. */
  private due: number | null;

  constructor(private readonly deps: UsageOutboxDeps) {
    this.due = this.count() > 0 ? this.now() : null;
  }

  /** Keeps the row of a model call that just ended; synchronous, so it is stored before anything else is sent. */
  keep(record: UsageRecord): void {
    const row = usageRow(record);
    this.deps.sql.exec(
      "INSERT INTO usage_outbox (id, row_json, kept_at) VALUES (?, ?, ?)",
      row.id,
      JSON.stringify(row),
      this.now(),
    );
    // The list write carries it in a moment; the alarm (set with the turn's end) is there should it not.
    this.due ??= this.now() + USAGE_OUTBOX_GRACE_MS;
  }

  /**
   * The kept rows, oldest first, at most `limit`. A row that does not read as one (none this code writes) is logged
   * and dropped: D1 could not take it either, and it would hold back every batch after it.
   */
  kept(limit: number = USAGE_ROWS_PER_WRITE): UsageRow[] {
    const rows = this.deps.sql
      .exec<Row>("SELECT id, row_json FROM usage_outbox ORDER BY kept_at, id LIMIT ?", limit)
      .toArray();
    const kept: UsageRow[] = [];
    for (const row of rows) {
      const parsed = UsageRowSchema.safeParse(parseJson(String(row.row_json)));
      if (parsed.success) {
        kept.push(parsed.data);
        continue;
      }
      this.deps.logger.addError("[AgentSession_UsageOutbox]", "A kept usage row that reads as no row was dropped.", [
        ["RowId", String(row.id)],
      ]);
      this.deps.sql.exec("DELETE FROM usage_outbox WHERE id = ?", row.id);
    }
    return kept;
  }

  /** D1 has `rows` (their batch was written): they go; with none left, the alarm is no longer wanted for them. */
  written(rows: readonly UsageRow[]): void {
    for (const row of rows) this.deps.sql.exec("DELETE FROM usage_outbox WHERE id = ?", row.id);
    this.failures = 0;
    if (this.count() > 0) return;
    const wanted = this.due !== null;
    this.due = null;
    if (wanted) this.deps.rearm();
  }

  /** The batch carrying the kept rows failed: they stay, and the alarm tries again later (each time later still). */
  failed(): void {
    if (this.count() === 0) return;
    const wait = USAGE_RETRY_MS[Math.min(this.failures, USAGE_RETRY_MS.length - 1)] ?? 0;
    this.failures += 1;
    this.due = this.now() + wait;
    this.deps.rearm();
  }

  /** When the alarm should wake the object to write what is kept, or null when nothing waits. */
  dueAt(): number | null {
    return this.due;
  }

  /** Whether any row waits for D1. */
  waiting(): boolean {
    return this.count() > 0;
  }

  private count(): number {
    const row = this.deps.sql.exec<Row>("SELECT COUNT(*) AS kept FROM usage_outbox").one();
    return Number(row.kept);
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

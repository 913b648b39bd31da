// A session's turns as a background turn's caller sees them (src/wire/turn.ts's TurnStatus): the open turn from the
// session row, the ended ones from the `turns` table, a completed turn's answer from its messages (by the index on
// the turn, schema version 8). Turns never overlap (one at a time), so the order they ended in is the order they
// started in, and the page walks the index on when each ended.
import { publicToolCall } from "../agent/agent-tool-call";
import type { TurnRecord, TurnStatus, TurnStatusValue } from "../wire/turn";
import { turnRecordOfRow } from "./session-rows";
import type { SessionStore } from "./session-store";

type Row = Record<string, SqlStorageValue>;

export class TurnHistory {
  constructor(
    private readonly store: SessionStore,
    private readonly sql: SqlStorage,
  ) {}

  /** The turn `turnId` of this session, or null when it has none by that id. */
  status(turnId: string): TurnStatus | null {
    const open = this.openTurn();
    if (open?.turnId === turnId) return open;
    const ended = this.store.endedTurn(turnId);
    return ended ? this.endedStatus(ended) : null;
  }

  /**
   * Up to `limit` turns, newest first, with `status` when given, started before the turn `before` (from the newest
   * when null; a `before` the session never had gives an empty page).
   */
  page(options: { status?: TurnStatusValue; before?: string | null; limit: number }): {
    turns: TurnStatus[];
    hasMore: boolean;
  } {
    const { status, before = null, limit } = options;
    const open = this.openTurn();
    const turns: TurnStatus[] = [];
    let cursor: { endedAt: string; turnId: string } | null = null;
    if (before !== null && before !== open?.turnId) {
      const from = this.store.endedTurn(before);
      if (!from) return { turns: [], hasMore: false };
      cursor = { endedAt: from.endedAt, turnId: from.turnId };
    }
    if (before === null && open && (!status || open.status === status)) turns.push(open);
    if (status === "running" || status === "paused") return { turns: turns.slice(0, limit), hasMore: false };
    const rows = this.endedRows(status ?? null, cursor, limit + 1 - turns.length);
    for (const row of rows) turns.push(this.endedStatus(row));
    return { turns: turns.slice(0, limit), hasMore: turns.length > limit };
  }

  private endedRows(
    status: TurnRecord["status"] | null,
    cursor: { endedAt: string; turnId: string } | null,
    limit: number,
  ): TurnRecord[] {
    if (limit <= 0) return [];
    const where: string[] = [];
    const args: SqlStorageValue[] = [];
    if (status) {
      where.push("status = ?");
      args.push(status);
    }
    if (cursor) {
      where.push("(ended_at < ? OR (ended_at = ? AND turn_id < ?))");
      args.push(cursor.endedAt, cursor.endedAt, cursor.turnId);
    }
    const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    return this.sql
      .exec<Row>(`SELECT * FROM turns ${filter} ORDER BY ended_at DESC, turn_id DESC LIMIT ?`, ...args, limit)
      .toArray()
      .map(turnRecordOfRow);
  }

  /** The turn that runs or waits now, or null when the session is idle. */
  private openTurn(): TurnStatus | null {
    const turn = this.store.turn();
    const status = this.store.status();
    if (!turn || status === "idle") return null;
    const calls = status === "running" ? [] : this.store.pendingToolCalls();
    return {
      sessionId: this.store.identity().sessionId,
      turnId: turn.turnId,
      status: status === "running" ? "running" : "paused",
      startedAt: new Date(turn.startedAt).toISOString(),
      endedAt: null,
      steps: turn.iterations,
      answer: null,
      pending:
        status === "running"
          ? null
          : {
              approvals: calls.filter((c) => c.state === "awaiting_approval").map(publicToolCall),
              clientCalls: calls.filter((c) => c.state === "awaiting_client").map(publicToolCall),
            },
      error: null,
    };
  }

  private endedStatus(record: TurnRecord): TurnStatus {
    return {
      sessionId: this.store.identity().sessionId,
      turnId: record.turnId,
      status: record.status,
      startedAt: record.startedAt,
      endedAt: record.endedAt,
      steps: record.iterations,
      answer: record.status === "completed" ? this.answer(record.turnId) : null,
      pending: null,
      error: record.error ? { code: record.error.code, message: record.error.message } : null,
    };
  }

  /** The completed turn's answer: its last `answer` message ("" for a turn that answered nothing). */
  private answer(turnId: string): string {
    const row = this.sql
      .exec<Row>("SELECT content FROM messages WHERE turn_id = ? AND kind = 'answer' ORDER BY seq DESC LIMIT 1", turnId)
      .toArray()[0];
    return typeof row?.content === "string" ? row.content : "";
  }
}

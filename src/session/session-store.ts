// The session's SQLite storage (inside its Durable Object): identity, status, conversation and its summaries, tool
// calls, turns, artifacts, mode history. Every row is parsed with its zod schema on the way in (session-rows.ts); the tables
// are the versioned schema's (session-schema.ts), which the object migrates before it constructs this store.
import { StoredToolCall } from "../agent/agent-tool-call";
import type { RatioStorage, StoredRatio } from "../agent/token-calibration";
import type { NewMessage, SessionIdentity, TurnState, TurnStore } from "../agent/turn-store";
import type { Artifact, ModeHistoryEntry } from "../wire/session";
import type { ConversationMessage, ConversationSummary, SessionStatus, TurnRecord } from "../wire/turn";
import {
  artifactOfRow,
  messageOfRow,
  modeHistoryOfRow,
  parseStored,
  type SessionRecord,
  sessionOfRow,
  shownMessage,
  summaryOfRow,
  tokenRatioOfRow,
  turnRecordOfRow,
} from "./session-rows";

type Row = Record<string, SqlStorageValue>;
const nowIso = () => new Date().toISOString();

/** Messages read from storage at a time when a walk back through the conversation goes past what is kept. */
const HISTORY_PAGE = 64;

const byBatchAndPosition = (a: StoredToolCall, b: StoredToolCall) => a.batch - b.batch || a.position - b.position;

/**
 * One store per object: it is the only writer of the object's storage, so it keeps what the loop reads again and
 * again (the session row with the open turn, the newest part of the conversation, the summary, the open turn's
 * calls) as it writes them, and a read of them costs no statement. Each read returns a copy of its own. The
 * conversation is never read whole on the loop's path: a model request walks it back from the newest message, by
 * its index, only as far as its budget reaches, so a message costs the same in a session of any length.
 */
export class SessionStore implements TurnStore, RatioStorage {
  /** The session row as last read or written, with the open turn (each read gets a copy of its own). */
  private row: { record: SessionRecord; turn: TurnState | null } | null = null;
  /**
   * The newest messages, in seq order, contiguous up to the newest one (append-only): as far back as the latest walk
   * went. Null until a walk first reads them; `tailComplete` when they reach the first message.
   */
  private tail: ConversationMessage[] | null = null;
  private tailComplete = false;
  /** The newest summary, once read (null: none yet). */
  private latestSummary: ConversationSummary | null | undefined;
  /** The calls of the turn most recently asked for. */
  private calls: { turnId: string; calls: StoredToolCall[] } | null = null;
  /** The session was deleted: its storage is gone, and the store answers as for a session that never was. */
  private erased = false;

  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  record(): SessionRecord | null {
    const row = this.sessionRow();
    return row ? { ...row.record } : null;
  }

  /** The kept row, read from storage the first time (none yet: read again next time). */
  private sessionRow(): { record: SessionRecord; turn: TurnState | null } | null {
    if (this.erased) return null;
    if (this.row) return this.row;
    const row = this.sql
      .exec<Row>(
        "SELECT session_id, org, user_id, mode, status, parent_session_id, turn_json, created_at, updated_at FROM session WHERE id = 1",
      )
      .toArray()[0];
    if (!row) return null;
    this.row = sessionOfRow(row);
    return this.row;
  }

  /** The kept row is updated with what was just written (the row changes only here). */
  private remember(change: Partial<SessionRecord>, turn?: TurnState | null): void {
    if (!this.row) return;
    this.row = { record: { ...this.row.record, ...change }, turn: turn === undefined ? this.row.turn : turn };
  }

  create(identity: SessionIdentity, parentSessionId: string | null): SessionRecord {
    const at = nowIso();
    this.sql.exec(
      "INSERT INTO session (id, session_id, org, user_id, mode, status, parent_session_id, turn_json, created_at, updated_at) VALUES (1, ?, ?, ?, ?, 'idle', ?, NULL, ?, ?)",
      identity.sessionId,
      identity.org,
      identity.user,
      identity.mode,
      parentSessionId,
      at,
      at,
    );
    const { sessionId, org, user, mode } = identity;
    const record: SessionRecord = {
      sessionId,
      org,
      user,
      mode,
      status: "idle",
      parentSessionId,
      createdAt: at,
      updatedAt: at,
    };
    this.row = { record, turn: null };
    return { ...record };
  }

  identity(): SessionIdentity {
    const record = this.record();
    if (!record) throw new Error("The session does not exist.");
    return { sessionId: record.sessionId, org: record.org, user: record.user, mode: record.mode };
  }

  status(): SessionStatus {
    return this.record()?.status ?? "idle";
  }

  turn(): TurnState | null {
    const turn = this.sessionRow()?.turn ?? null;
    return turn === null ? null : structuredClone(turn);
  }

  saveTurn(status: SessionStatus, turn: TurnState | null): void {
    const updatedAt = nowIso();
    const json = turn ? JSON.stringify(turn) : null;
    this.sql.exec("UPDATE session SET status = ?, turn_json = ?, updated_at = ? WHERE id = 1", status, json, updatedAt);
    // Never called inside a transactionSync: a write that could roll back would leave the kept row ahead of storage.
    this.remember({ status, updatedAt }, turn === null ? null : structuredClone(turn));
  }

  /** The mode and its audit row in one transaction (TUL-007 §3.5's only side effect). */
  changeMode(to: string, reason: string, userId: string): ModeHistoryEntry {
    const entry = this.storage.transactionSync(() => {
      const from = this.identity().mode;
      const at = nowIso();
      this.sql.exec("UPDATE session SET mode = ?, updated_at = ? WHERE id = 1", to, at);
      this.sql.exec(
        "INSERT INTO mode_history (from_mode, to_mode, reason, user_id, at) VALUES (?, ?, ?, ?, ?)",
        from,
        to,
        reason,
        userId,
        at,
      );
      return { from, to, reason, userId, at };
    });
    // After the transaction committed: a rolled-back change never reaches the kept row.
    this.remember({ mode: entry.to, updatedAt: entry.at });
    return entry;
  }

  modeHistory(): ModeHistoryEntry[] {
    return this.sql
      .exec<Row>("SELECT from_mode, to_mode, reason, user_id, at FROM mode_history ORDER BY id")
      .toArray()
      .map(modeHistoryOfRow);
  }

  /** The whole conversation, read from storage: for tests and exports, never on the loop's path. */
  messages(): ConversationMessage[] {
    return this.sql.exec<Row>("SELECT * FROM messages ORDER BY seq").toArray().map(messageOfRow);
  }

  /**
   * The conversation from its newest message back, as far as the caller reads: from the messages kept in memory,
   * then from storage a page at a time (by the primary key's index). What is kept afterwards is what this walk read.
   */
  *newestFirst(): Generator<ConversationMessage, void, undefined> {
    let oldestRead: number | null = null;
    try {
      if (this.tail === null) {
        this.tail = this.readBefore(null, HISTORY_PAGE).reverse();
        this.tailComplete = this.tail.length < HISTORY_PAGE;
      }
      for (let i = this.tail.length - 1; ; i--) {
        if (i < 0) {
          if (this.tailComplete || this.tail.length === 0) return;
          const older = this.readBefore(this.tail[0]?.seq ?? null, HISTORY_PAGE).reverse();
          this.tailComplete = older.length < HISTORY_PAGE;
          if (older.length === 0) return;
          this.tail = [...older, ...this.tail];
          i = older.length - 1;
        }
        const message = this.tail[i];
        if (!message) return;
        oldestRead = message.seq;
        yield message;
      }
    } finally {
      // Keep what this walk read and nothing older: memory stays what one request's history needs.
      const from = oldestRead;
      if (this.tail && from !== null && (this.tail[0]?.seq ?? from) < from) {
        this.tail = this.tail.filter((m) => m.seq >= from);
        this.tailComplete = false;
      }
    }
  }

  /** Up to `limit` messages before `before` (the newest when null), newest first, and whether older ones remain. */
  messagesPage(before: number | null, limit: number): { messages: ConversationMessage[]; hasMore: boolean } {
    const rows = this.readBefore(before, limit + 1);
    return { messages: rows.slice(0, limit).map(shownMessage), hasMore: rows.length > limit };
  }

  private readBefore(before: number | null, limit: number): ConversationMessage[] {
    const rows =
      before === null
        ? this.sql.exec<Row>("SELECT * FROM messages ORDER BY seq DESC LIMIT ?", limit)
        : this.sql.exec<Row>("SELECT * FROM messages WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit);
    return rows.toArray().map(messageOfRow);
  }

  /** Up to `limit` messages after `afterSeq` and before `beforeSeq`, in order (by the primary key's index). */
  messagesBetween(afterSeq: number, beforeSeq: number, limit: number): ConversationMessage[] {
    return this.sql
      .exec<Row>("SELECT * FROM messages WHERE seq > ? AND seq < ? ORDER BY seq LIMIT ?", afterSeq, beforeSeq, limit)
      .toArray()
      .map(messageOfRow);
  }

  /** The messages after `seq`, in order. */
  messagesAfter(seq: number): ConversationMessage[] {
    return this.sql.exec<Row>("SELECT * FROM messages WHERE seq > ? ORDER BY seq", seq).toArray().map(messageOfRow);
  }

  /** The seq of the newest message, 0 before the first. */
  lastMessageSeq(): number {
    const kept = this.tail?.at(-1);
    if (kept) return kept.seq;
    const row = this.sql.exec<Row>("SELECT MAX(seq) AS seq FROM messages").one();
    return typeof row.seq === "number" ? row.seq : 0;
  }

  /** The user's first message with text or files (the session list's title), or null before there is one. */
  firstUserMessage(): ConversationMessage | null {
    const row = this.sql
      .exec<Row>(
        "SELECT * FROM messages WHERE role = 'user' AND kind = 'message' AND ((content IS NOT NULL AND content != '') OR attachments_json IS NOT NULL) ORDER BY seq LIMIT 1",
      )
      .toArray()[0];
    return row ? messageOfRow(row) : null;
  }

  /** The summary the model is sent in place of the conversation's earlier part; null before the first compaction. */
  summary(): ConversationSummary | null {
    if (this.latestSummary === undefined) {
      const row = this.sql
        .exec<Row>("SELECT from_seq, to_seq, text, created_at FROM summaries ORDER BY id DESC LIMIT 1")
        .toArray()[0];
      this.latestSummary = row ? summaryOfRow(row) : null;
    }
    return this.latestSummary ? { ...this.latestSummary } : null;
  }

  /**
   * Stores a summary made from the conversation as it stood after `basedOn` (the summary it took in, or null) was
   * the newest: false, storing nothing, when another summary was stored meanwhile, or when the messages it covers
   * are no longer there (the range it covers is no longer the one to replace).
   */
  saveSummary(summary: Omit<ConversationSummary, "createdAt">, basedOn: ConversationSummary | null): boolean {
    const newest = this.summary();
    if ((newest?.toSeq ?? null) !== (basedOn?.toSeq ?? null) || summary.toSeq <= (newest?.toSeq ?? 0)) return false;
    const covered = this.sql.exec<Row>("SELECT COUNT(*) AS n FROM messages WHERE seq = ?", summary.toSeq).one();
    if (covered.n !== 1) return false;
    const saved: ConversationSummary = { ...summary, createdAt: nowIso() };
    this.sql.exec(
      "INSERT INTO summaries (from_seq, to_seq, text, created_at) VALUES (?, ?, ?, ?)",
      saved.fromSeq,
      saved.toSeq,
      saved.text,
      saved.createdAt,
    );
    this.latestSummary = saved;
    return true;
  }

  appendMessage(message: NewMessage): ConversationMessage {
    const createdAt = nowIso();
    const row = this.sql
      .exec<Row>(
        "INSERT INTO messages (turn_id, role, content, tool_calls_json, tool_call_id, kind, created_at, attachments_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        message.turnId,
        message.role,
        message.content,
        message.toolCalls ? JSON.stringify(message.toolCalls) : null,
        message.toolCallId ?? null,
        message.kind,
        createdAt,
        message.attachments?.length ? JSON.stringify(message.attachments) : null,
      )
      .one();
    const appended: ConversationMessage = Object.freeze({ ...message, seq: Number(row.seq), createdAt });
    this.tail?.push(appended);
    return appended;
  }

  toolCalls(turnId: string): StoredToolCall[] {
    if (this.calls?.turnId !== turnId) {
      const calls = this.sql
        .exec<Row>("SELECT data_json FROM tool_calls WHERE turn_id = ? ORDER BY batch, position", turnId)
        .toArray()
        .map((r) => parseStored(StoredToolCall, r.data_json, "tool call"));
      this.calls = { turnId, calls };
    }
    return this.calls.calls.map((c) => ({ ...c }));
  }

  saveToolCall(call: StoredToolCall): void {
    this.sql.exec(
      "INSERT INTO tool_calls (id, turn_id, batch, position, data_json) VALUES (?, ?, ?, ?, ?) ON CONFLICT (turn_id, id) DO UPDATE SET data_json = excluded.data_json",
      call.id,
      call.turnId,
      call.batch,
      call.position,
      JSON.stringify(call),
    );
    const kept = this.calls;
    if (kept?.turnId !== call.turnId) return;
    const copy = { ...call };
    const index = kept.calls.findIndex((c) => c.id === call.id);
    if (index >= 0) kept.calls[index] = copy;
    else {
      kept.calls.push(copy);
      kept.calls.sort(byBatchAndPosition);
    }
  }

  recordTurnOutcome(outcome: TurnRecord): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO turns (turn_id, status, started_at, ended_at, iterations, error_json) VALUES (?, ?, ?, ?, ?, ?)",
      outcome.turnId,
      outcome.status,
      outcome.startedAt,
      outcome.endedAt,
      outcome.iterations,
      outcome.error ? JSON.stringify(outcome.error) : null,
    );
  }

  turns(): TurnRecord[] {
    return this.sql.exec<Row>("SELECT * FROM turns ORDER BY started_at").toArray().map(turnRecordOfRow);
  }

  /** How the turn `turnId` ended; null when it has not ended (or never was). */
  endedTurn(turnId: string): TurnRecord | null {
    const row = this.sql.exec<Row>("SELECT * FROM turns WHERE turn_id = ?", turnId).toArray()[0];
    return row ? turnRecordOfRow(row) : null;
  }

  /** The newest `limit` ended turns, oldest of them first (by the index on when each ended). */
  recentTurns(limit: number): TurnRecord[] {
    return this.sql
      .exec<Row>("SELECT * FROM turns ORDER BY ended_at DESC LIMIT ?", limit)
      .toArray()
      .map(turnRecordOfRow)
      .reverse();
  }

  lastTurnOutcome(): TurnRecord | null {
    const row = this.sql.exec<Row>("SELECT * FROM turns ORDER BY ended_at DESC LIMIT 1").toArray()[0];
    return row ? turnRecordOfRow(row) : null;
  }

  saveArtifact(artifact: Omit<Artifact, "id" | "createdAt">): Artifact {
    const saved: Artifact = { ...artifact, id: crypto.randomUUID(), createdAt: nowIso() };
    this.sql.exec(
      "INSERT INTO artifacts (id, kind, title, content, created_at) VALUES (?, ?, ?, ?, ?)",
      saved.id,
      saved.kind,
      saved.title,
      saved.content,
      saved.createdAt,
    );
    return saved;
  }

  artifacts(): Artifact[] {
    return this.sql.exec<Row>("SELECT * FROM artifacts ORDER BY created_at, id").toArray().map(artifactOfRow);
  }

  /** Every call of every turn, in the order they were made (the export). */
  allToolCalls(): StoredToolCall[] {
    return this.sql
      .exec<Row>("SELECT data_json FROM tool_calls ORDER BY rowid")
      .toArray()
      .map((r) => parseStored(StoredToolCall, r.data_json, "tool call"));
  }

  /**
   * Deletes everything the object stores, its alarm too. From then on `record()` is null, so every door answers as
   * for a session that does not exist; nothing else may be read or written.
   */
  async erase(): Promise<void> {
    this.erased = true;
    this.row = null;
    this.tail = null;
    this.tailComplete = false;
    this.latestSummary = null;
    this.calls = null;
    await this.storage.deleteAlarm();
    await this.storage.deleteAll();
  }

  /** The token estimate's ratio per route, as last written (token-calibration.ts). */
  tokenRatios(): StoredRatio[] {
    if (this.erased) return [];
    return this.sql.exec<Row>("SELECT * FROM token_ratios").toArray().map(tokenRatioOfRow);
  }

  saveTokenRatio(row: StoredRatio): void {
    if (this.erased) return;
    this.sql.exec(
      `INSERT INTO token_ratios (route, ratio, estimated_tokens, reported_tokens) VALUES (?, ?, ?, ?)
       ON CONFLICT (route) DO UPDATE SET ratio = excluded.ratio, estimated_tokens = excluded.estimated_tokens,
       reported_tokens = excluded.reported_tokens`,
      row.route,
      row.ratio,
      row.estimatedTokens,
      row.reportedTokens,
    );
  }

  /** Calls still waiting on a person or a client, in the open turn. */
  pendingToolCalls(): StoredToolCall[] {
    const turn = this.turn();
    return turn
      ? this.toolCalls(turn.turnId).filter((c) => c.state === "awaiting_approval" || c.state === "awaiting_client")
      : [];
  }
}

// The session's SQLite storage (inside its Durable Object): identity, status, conversation, tool calls, mode history.
import type { StoredToolCall } from "../agent/agent-tool-call";
import type {
  ConversationMessage,
  NewMessage,
  SessionIdentity,
  SessionStatus,
  TurnRecord,
  TurnState,
  TurnStore,
} from "../agent/turn-store";
import type { ModelToolCall } from "../llm/chat-model";
import type { Artifact, ModeHistoryEntry } from "../wire";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS session (
     id INTEGER PRIMARY KEY CHECK (id = 1), session_id TEXT NOT NULL, org TEXT NOT NULL, user_id TEXT NOT NULL,
     mode TEXT NOT NULL, status TEXT NOT NULL, parent_session_id TEXT, turn_json TEXT,
     created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS messages (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT,
     tool_calls_json TEXT, tool_call_id TEXT, kind TEXT NOT NULL, created_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS tool_calls (
     turn_id TEXT NOT NULL, id TEXT NOT NULL, batch INTEGER NOT NULL, position INTEGER NOT NULL, data_json TEXT NOT NULL,
     PRIMARY KEY (turn_id, id))`,
  `CREATE TABLE IF NOT EXISTS artifacts (
     id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS turns (
     turn_id TEXT PRIMARY KEY, status TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
     iterations INTEGER NOT NULL, error_json TEXT)`,
  `CREATE TABLE IF NOT EXISTS mode_history (
     id INTEGER PRIMARY KEY AUTOINCREMENT, from_mode TEXT NOT NULL, to_mode TEXT NOT NULL, reason TEXT NOT NULL,
     user_id TEXT NOT NULL, at TEXT NOT NULL)`,
];

export interface SessionRecord extends SessionIdentity {
  status: SessionStatus;
  parentSessionId: string | null;
  createdAt: string;
  updatedAt: string;
}

type Row = Record<string, SqlStorageValue>;
const text = (value: SqlStorageValue | undefined): string => (typeof value === "string" ? value : "");
const nowIso = () => new Date().toISOString();

/**
 * The session row, as last read or written, per storage: every SessionStore on one object's storage shares it
 * (they are the only writers of the row), so the loop's many reads of identity, status and the open turn cost no
 * query (a request reads the open turn ten times before its first model call). The turn is kept as its JSON,
 * so every read returns a turn of its own, as a read of storage does.
 */
const rows = new WeakMap<DurableObjectStorage, { record: SessionRecord; turnJson: string | null }>();

/**
 * The conversation (append-only) and the calls of the turn most recently asked for, per storage, kept as they
 * are written: the loop reads both on every iteration, and a read of the cache costs no query or JSON parse.
 */
const conversations = new WeakMap<DurableObjectStorage, ConversationMessage[]>();
const turnCalls = new WeakMap<DurableObjectStorage, { turnId: string; calls: StoredToolCall[] }>();

const byBatchAndPosition = (a: StoredToolCall, b: StoredToolCall) => a.batch - b.batch || a.position - b.position;

export class SessionStore implements TurnStore {
  constructor(private readonly storage: DurableObjectStorage) {
    for (const statement of SCHEMA) storage.sql.exec(statement);
  }

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  record(): SessionRecord | null {
    const row = this.row();
    return row ? { ...row.record } : null;
  }

  /** The kept row, read from storage the first time (none yet: read again next time). */
  private row(): { record: SessionRecord; turnJson: string | null } | null {
    const cached = rows.get(this.storage);
    if (cached) return cached;
    const row = this.sql
      .exec<Row>(
        "SELECT session_id, org, user_id, mode, status, parent_session_id, turn_json, created_at, updated_at FROM session WHERE id = 1",
      )
      .toArray()[0];
    if (!row) return null;
    const record: SessionRecord = {
      sessionId: text(row.session_id),
      org: text(row.org),
      user: text(row.user_id),
      mode: text(row.mode),
      status: text(row.status) as SessionStatus,
      parentSessionId: typeof row.parent_session_id === "string" ? row.parent_session_id : null,
      createdAt: text(row.created_at),
      updatedAt: text(row.updated_at),
    };
    const kept = { record, turnJson: typeof row.turn_json === "string" ? row.turn_json : null };
    rows.set(this.storage, kept);
    return kept;
  }

  /** The kept row is updated with what was just written (the row changes only here). */
  private remember(change: Partial<SessionRecord>, turnJson?: string | null): void {
    const cached = rows.get(this.storage);
    if (!cached) return;
    rows.set(this.storage, {
      record: { ...cached.record, ...change },
      turnJson: turnJson === undefined ? cached.turnJson : turnJson,
    });
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
    rows.set(this.storage, { record, turnJson: null });
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
    const json = this.row()?.turnJson ?? null;
    return json === null ? null : (JSON.parse(json) as TurnState);
  }

  saveTurn(status: SessionStatus, turn: TurnState | null): void {
    const updatedAt = nowIso();
    const json = turn ? JSON.stringify(turn) : null;
    this.sql.exec("UPDATE session SET status = ?, turn_json = ?, updated_at = ? WHERE id = 1", status, json, updatedAt);
    // Never called inside a transactionSync: a write that could roll back would leave the kept row ahead of storage.
    this.remember({ status, updatedAt }, json);
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
    // After the transaction committed: a rolled-back change never reaches the cached row.
    this.remember({ mode: entry.to, updatedAt: entry.at });
    return entry;
  }

  modeHistory(): ModeHistoryEntry[] {
    return this.sql
      .exec<Row>("SELECT from_mode, to_mode, reason, user_id, at FROM mode_history ORDER BY id")
      .toArray()
      .map((r) => ({
        from: text(r.from_mode),
        to: text(r.to_mode),
        reason: text(r.reason),
        userId: text(r.user_id),
        at: text(r.at),
      }));
  }

  messages(): ConversationMessage[] {
    let cached = conversations.get(this.storage);
    if (!cached) {
      cached = this.readMessages();
      conversations.set(this.storage, cached);
    }
    return [...cached];
  }

  private readMessages(): ConversationMessage[] {
    return this.sql
      .exec<Row>("SELECT * FROM messages ORDER BY seq")
      .toArray()
      .map((r) => ({
        seq: Number(r.seq),
        turnId: text(r.turn_id),
        role: text(r.role) as ConversationMessage["role"],
        content: typeof r.content === "string" ? r.content : null,
        ...(typeof r.tool_calls_json === "string"
          ? { toolCalls: JSON.parse(r.tool_calls_json) as ModelToolCall[] }
          : {}),
        ...(typeof r.tool_call_id === "string" ? { toolCallId: r.tool_call_id } : {}),
        kind: text(r.kind) as ConversationMessage["kind"],
        createdAt: text(r.created_at),
      }));
  }

  appendMessage(message: NewMessage): ConversationMessage {
    const createdAt = nowIso();
    const row = this.sql
      .exec<Row>(
        "INSERT INTO messages (turn_id, role, content, tool_calls_json, tool_call_id, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        message.turnId,
        message.role,
        message.content,
        message.toolCalls ? JSON.stringify(message.toolCalls) : null,
        message.toolCallId ?? null,
        message.kind,
        createdAt,
      )
      .one();
    const appended: ConversationMessage = Object.freeze({ ...message, seq: Number(row.seq), createdAt });
    conversations.get(this.storage)?.push(appended);
    return appended;
  }

  toolCalls(turnId: string): StoredToolCall[] {
    let cached = turnCalls.get(this.storage);
    if (cached?.turnId !== turnId) {
      const calls = this.sql
        .exec<Row>("SELECT data_json FROM tool_calls WHERE turn_id = ? ORDER BY batch, position", turnId)
        .toArray()
        .map((r) => JSON.parse(text(r.data_json)) as StoredToolCall);
      cached = { turnId, calls };
      turnCalls.set(this.storage, cached);
    }
    return cached.calls.map((c) => ({ ...c }));
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
    const cached = turnCalls.get(this.storage);
    if (cached?.turnId !== call.turnId) return;
    const copy = { ...call };
    const index = cached.calls.findIndex((c) => c.id === call.id);
    if (index >= 0) cached.calls[index] = copy;
    else {
      cached.calls.push(copy);
      cached.calls.sort(byBatchAndPosition);
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
    return this.sql.exec<Row>("SELECT * FROM turns ORDER BY started_at").toArray().map(turnRecord);
  }

  lastTurnOutcome(): TurnRecord | null {
    const row = this.sql.exec<Row>("SELECT * FROM turns ORDER BY ended_at DESC LIMIT 1").toArray()[0];
    return row ? turnRecord(row) : null;
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
    return this.sql
      .exec<Row>("SELECT * FROM artifacts ORDER BY created_at, id")
      .toArray()
      .map((r) => ({
        id: text(r.id),
        kind: text(r.kind),
        title: text(r.title),
        content: text(r.content),
        createdAt: text(r.created_at),
      }));
  }

  /** Calls still waiting on a person or a client, in the open turn. */
  pendingToolCalls(): StoredToolCall[] {
    const turn = this.turn();
    return turn
      ? this.toolCalls(turn.turnId).filter((c) => c.state === "awaiting_approval" || c.state === "awaiting_client")
      : [];
  }
}

function turnRecord(r: Row): TurnRecord {
  return {
    turnId: text(r.turn_id),
    status: text(r.status) as TurnRecord["status"],
    startedAt: text(r.started_at),
    endedAt: text(r.ended_at),
    iterations: Number(r.iterations),
    error: typeof r.error_json === "string" ? (JSON.parse(r.error_json) as TurnRecord["error"]) : null,
  };
}

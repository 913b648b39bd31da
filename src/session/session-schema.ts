// The session object's SQLite schema, versioned: ordered migrations, each run once, in a transaction with the
// version they bring the storage to. The object runs them when it starts, before it serves a request; an object
// written before the schema had a version (tables made with CREATE TABLE IF NOT EXISTS) is adopted by the first.

export interface SessionMigration {
  version: number;
  /** What the migration does, in a few words. */
  name: string;
  apply(sql: SqlStorage): void;
}

type Row = Record<string, SqlStorageValue>;

const run = (sql: SqlStorage, statements: readonly string[]) => {
  for (const statement of statements) sql.exec(statement);
};

export const SESSION_MIGRATIONS: readonly SessionMigration[] = [
  {
    version: 1,
    name: "the session, its conversation, tool calls, turns, artifacts, mode history, event log and socket tickets",
    apply(sql) {
      run(sql, [
        `CREATE TABLE IF NOT EXISTS session (
           id INTEGER PRIMARY KEY CHECK (id = 1), session_id TEXT NOT NULL, org TEXT NOT NULL, user_id TEXT NOT NULL,
           mode TEXT NOT NULL, status TEXT NOT NULL, parent_session_id TEXT, turn_json TEXT,
           created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS messages (
           seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT,
           tool_calls_json TEXT, tool_call_id TEXT, kind TEXT NOT NULL, created_at TEXT NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS tool_calls (
           turn_id TEXT NOT NULL, id TEXT NOT NULL, batch INTEGER NOT NULL, position INTEGER NOT NULL,
           data_json TEXT NOT NULL, PRIMARY KEY (turn_id, id))`,
        `CREATE TABLE IF NOT EXISTS artifacts (
           id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS turns (
           turn_id TEXT PRIMARY KEY, status TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
           iterations INTEGER NOT NULL, error_json TEXT)`,
        `CREATE TABLE IF NOT EXISTS mode_history (
           id INTEGER PRIMARY KEY AUTOINCREMENT, from_mode TEXT NOT NULL, to_mode TEXT NOT NULL, reason TEXT NOT NULL,
           user_id TEXT NOT NULL, at TEXT NOT NULL)`,
        `CREATE TABLE IF NOT EXISTS events (
           seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT, frame_json TEXT NOT NULL, created_at TEXT NOT NULL)`,
        "CREATE TABLE IF NOT EXISTS event_log_meta (id INTEGER PRIMARY KEY CHECK (id = 1), pruned_through INTEGER NOT NULL)",
        "INSERT OR IGNORE INTO event_log_meta (id, pruned_through) VALUES (1, 0)",
        `CREATE TABLE IF NOT EXISTS ws_tickets (
           ticket_hash TEXT PRIMARY KEY, org TEXT NOT NULL, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL,
           key_id TEXT NOT NULL DEFAULT '')`,
      ]);
      // Objects written before tickets carried the key that asked for them.
      const columns = sql.exec<Row>("PRAGMA table_info(ws_tickets)").toArray();
      if (!columns.some((c) => c.name === "key_id")) {
        sql.exec("ALTER TABLE ws_tickets ADD COLUMN key_id TEXT NOT NULL DEFAULT ''");
      }
    },
  },
  {
    version: 2,
    name: "the newest ended turn found without reading them all",
    apply(sql) {
      // A session that lasts reads its newest ended turn (a paused turn's expiry) from thousands: an index on when
      // each ended, one entry written per turn. The event log and the tool calls get none: they are written many
      // times a turn (every streamed token is a row), and an index would add a write to each.
      sql.exec("CREATE INDEX IF NOT EXISTS turns_by_end ON turns (ended_at)");
    },
  },
  {
    version: 3,
    name: "summaries of the conversation's earlier part (compaction)",
    apply(sql) {
      // One row per compaction, each covering the messages from_seq..to_seq (the one before it included); the model
      // is sent the newest. Written once a compaction, read once an object's life.
      sql.exec(
        `CREATE TABLE IF NOT EXISTS summaries (
           id INTEGER PRIMARY KEY AUTOINCREMENT, from_seq INTEGER NOT NULL, to_seq INTEGER NOT NULL,
           text TEXT NOT NULL, created_at TEXT NOT NULL)`,
      );
    },
  },
  {
    version: 4,
    name: "the turn timeline: each turn's steps as the loop told them",
    apply(sql) {
      // A few rows a turn (a run, its model and tool calls, its waits), read a turn at a time: the index on the turn
      // costs one more write per step, and a turn's timeline is read without scanning the session's every step.
      sql.exec(
        `CREATE TABLE IF NOT EXISTS turn_steps (
           seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, kind TEXT NOT NULL,
           started_at INTEGER NOT NULL, step_json TEXT NOT NULL)`,
      );
      sql.exec("CREATE INDEX IF NOT EXISTS turn_steps_by_turn ON turn_steps (turn_id)");
    },
  },
  {
    version: 5,
    name: "a message's attachments (text files, images)",
    apply(sql) {
      // A JSON array beside the message, NULL for a message without files (every message before this version).
      sql.exec("ALTER TABLE messages ADD COLUMN attachments_json TEXT");
    },
  },
  {
    version: 6,
    name: "where a branch a person started came from",
    apply(sql) {
      // One row at most, written with the session when a person branches another (session-branch.ts).
      sql.exec(
        `CREATE TABLE IF NOT EXISTS branch_origin (
           id INTEGER PRIMARY KEY CHECK (id = 1), session_id TEXT NOT NULL, before_seq INTEGER NOT NULL,
           seeded_through INTEGER NOT NULL)`,
      );
    },
  },
  {
    version: 7,
    name: "the token estimate's ratio per model route",
    apply(sql) {
      // One small row per route the session's calls took, written when its ratio moves (token-calibration.ts).
      sql.exec(
        `CREATE TABLE IF NOT EXISTS token_ratios (
           route TEXT PRIMARY KEY, ratio REAL NOT NULL, estimated_tokens INTEGER NOT NULL,
           reported_tokens INTEGER NOT NULL)`,
      );
    },
  },
  {
    version: 8,
    name: "a turn's messages found by the turn (a background turn's answer)",
    apply(sql) {
      // A turn's status reads its answer by the turn's id; a few messages a turn, so one more index write each is
      // cheap, and a session of any length answers a poll without scanning its conversation.
      sql.exec("CREATE INDEX IF NOT EXISTS messages_by_turn ON messages (turn_id)");
    },
  },
  {
    version: 9,
    name: "turn events kept until the webhook queue has them (the event outbox)",
    apply(sql) {
      // A row is written in the same step as a turn's stop and deleted once its queue message is sent: the table
      // holds no more than the events not yet sent (none, mostly), so it needs no index.
      sql.exec(
        `CREATE TABLE IF NOT EXISTS event_outbox (
           id TEXT PRIMARY KEY, message_json TEXT NOT NULL, kept_at INTEGER NOT NULL)`,
      );
    },
  },
  {
    version: 10,
    name: "how far the search index (D1 message_index) has the conversation",
    apply(sql) {
      // One row, written after each feed of the index (src/session/message-feed.ts); none yet: nothing indexed.
      sql.exec(
        "CREATE TABLE IF NOT EXISTS search_feed (id INTEGER PRIMARY KEY CHECK (id = 1), indexed_seq INTEGER NOT NULL)",
      );
    },
  },
  {
    version: 11,
    name: "the mask vault: what a mask guardrail hid from the model, by placeholder",
    apply(sql) {
      // One row, written when a check masks a new value (src/session/session-vault.ts); none while nothing is masked.
      sql.exec(
        "CREATE TABLE IF NOT EXISTS mask_vault (id INTEGER PRIMARY KEY CHECK (id = 1), vault_json TEXT NOT NULL)",
      );
    },
  },
  {
    version: 12,
    name: "the mode version a session is pinned to (its snapshot)",
    apply(sql) {
      // One row at most, written with the session when it is made pinned (src/session/mode-pin.ts); none: unpinned.
      // The snapshot is kept here, not read from D1 each turn: a version never changes, and the session runs it even
      // if its mode is deleted.
      sql.exec(
        `CREATE TABLE IF NOT EXISTS mode_pin (
           id INTEGER PRIMARY KEY CHECK (id = 1), mode TEXT NOT NULL, version INTEGER NOT NULL,
           snapshot_json TEXT NOT NULL)`,
      );
    },
  },
  {
    version: 13,
    name: "usage rows kept until D1 has them (the usage outbox)",
    apply(sql) {
      // A row is written when a model call ends, before the turn's reply, and deleted once the list entry's D1 batch
      // carried it (src/session/usage-outbox.ts): the table holds the rows of a turn or two at most, so no index.
      sql.exec(
        `CREATE TABLE IF NOT EXISTS usage_outbox (
           id TEXT PRIMARY KEY, row_json TEXT NOT NULL, kept_at INTEGER NOT NULL)`,
      );
    },
  },
  {
    version: 14,
    name: "the conversation's head on the agent's OpenAI door (which history continues the session)",
    apply(sql) {
      // One row, written after each answer of the door with the key it answered (src/session/thread-head.ts); none
      // before the first: the session then asks D1's agent_threads, where heads were kept alone before.
      sql.exec(
        "CREATE TABLE IF NOT EXISTS thread_head (id INTEGER PRIMARY KEY CHECK (id = 1), key_id TEXT NOT NULL, head TEXT NOT NULL)",
      );
    },
  },
];

/** The version the newest migration brings storage to. */
export const SESSION_SCHEMA_VERSION = SESSION_MIGRATIONS.at(-1)?.version ?? 0;

const VERSION_TABLE =
  "CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)";

/** The version storage is at: 0 for storage the versioned schema never touched (new, or written before it). */
export function sessionSchemaVersion(sql: SqlStorage): number {
  sql.exec(VERSION_TABLE);
  const row = sql.exec<Row>("SELECT version FROM schema_version WHERE id = 1").toArray()[0];
  return row ? Number(row.version) : 0;
}

/**
 * Brings the object's storage to SESSION_SCHEMA_VERSION: each migration above the stored version, in order, in one
 * transaction with the new version (a migration that fails leaves the storage as it was, and throws). Returns the
 * versions it applied. Storage at a newer version (code rolled back) is left as it is: migrations only add, so
 * older code reads what it knows.
 */
export function migrateSessionStorage(storage: DurableObjectStorage): number[] {
  const from = sessionSchemaVersion(storage.sql);
  const pending = SESSION_MIGRATIONS.filter((m) => m.version > from);
  if (pending.length === 0) return [];
  // One transaction for all of them: a new object's first start writes its schema in one commit.
  storage.transactionSync(() => {
    for (const migration of pending) migration.apply(storage.sql);
    storage.sql.exec(
      "INSERT INTO schema_version (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
      SESSION_SCHEMA_VERSION,
    );
  });
  return pending.map((m) => m.version);
}

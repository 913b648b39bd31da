// The session object's storage has a schema version and ordered migrations: an object written before the schema
// had a version (its tables as the code of then created them, rows in them) is migrated when it starts, and reads
// back everything it held.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import { SESSION_SCHEMA_VERSION, sessionSchemaVersion } from "../../src/session/session-schema";
import { approve, call, getSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

/** The tables as the session object created them before its schema had a version (and before tickets had a key). */
const UNVERSIONED_SCHEMA = [
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
  `CREATE TABLE IF NOT EXISTS events (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT, frame_json TEXT NOT NULL, created_at TEXT NOT NULL)`,
  "CREATE TABLE IF NOT EXISTS event_log_meta (id INTEGER PRIMARY KEY CHECK (id = 1), pruned_through INTEGER NOT NULL)",
  "INSERT OR IGNORE INTO event_log_meta (id, pruned_through) VALUES (1, 0)",
  "CREATE TABLE IF NOT EXISTS ws_tickets (ticket_hash TEXT PRIMARY KEY, org TEXT NOT NULL, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL)",
];

const AT = "2026-11-01T10:00:00.000Z";

/** Storage as the unversioned code left it: its tables, no version, none of the versioned schema's indexes. */
function asUnversioned(sql: SqlStorage): void {
  for (const { name } of sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").toArray()) {
    if (!name.startsWith("_cf") && name !== "sqlite_sequence") sql.exec(`DROP TABLE IF EXISTS "${name}"`);
  }
  for (const statement of UNVERSIONED_SCHEMA) sql.exec(statement);
}

/** An object whose storage holds what the unversioned code wrote: one finished turn, a mode change, an artifact. */
async function writtenBeforeVersions(): Promise<string> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  const sessionId = await runInDurableObject(stub, (_instance: AgentSession, state) => {
    const { sql } = state.storage;
    asUnversioned(sql);
    const id = state.id.toString();
    sql.exec("INSERT INTO session VALUES (1, ?, 'org-a', 'bob', 'workspace', 'idle', NULL, NULL, ?, ?)", id, AT, AT);
    sql.exec(
      "INSERT INTO messages (turn_id, role, content, tool_calls_json, tool_call_id, kind, created_at) VALUES ('t1', 'user', 'Hello', NULL, NULL, 'message', ?), ('t1', 'assistant', 'Hi there.', NULL, NULL, 'answer', ?)",
      AT,
      AT,
    );
    sql.exec("INSERT INTO turns VALUES ('t1', 'completed', ?, ?, 1, NULL)", AT, AT);
    sql.exec(
      "INSERT INTO mode_history (from_mode, to_mode, reason, user_id, at) VALUES ('general', 'workspace', 'files', 'bob', ?)",
      AT,
    );
    sql.exec("INSERT INTO artifacts VALUES ('a1', 'ddr', 'A record', '# A record', ?)", AT);
    return id;
  });
  // The next call finds a new instance, as after a deploy: its constructor migrates the storage.
  await evictDurableObject(stub);
  return sessionId;
}

/**
 * An object the unversioned code left waiting for approval: an open turn, its call waiting, the conversation and
 * the frames it logged, each in the JSON that code wrote.
 */
async function pausedBeforeVersions(marker: string): Promise<string> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  const sessionId = await runInDurableObject(stub, (_instance: AgentSession, state) => {
    const { sql } = state.storage;
    asUnversioned(sql);
    const id = state.id.toString();
    const now = Date.now();
    const turn = {
      turnId: "t1",
      startedAt: now,
      workedMs: 5,
      iterations: 1,
      parseFailures: 0,
      batch: 1,
      pausedAt: now,
      pauseExpiresAt: now + 86_400_000,
      text: "",
      stepFormat: "native",
    };
    const call = {
      id: "call_1",
      name: "agent_hello_world",
      argumentsJson: '{"name":"Dana"}',
      isServerTool: true,
      wasExecuted: false,
      requiresClientExecution: false,
      requiresApproval: true,
      approval: "pending",
      resultJson: null,
      errorMessage: null,
      turnId: "t1",
      batch: 1,
      position: 0,
      state: "awaiting_approval",
      terminate: false,
    };
    const { turnId: _t, batch: _b, position: _p, state: _s, terminate: _x, ...publicCall } = call;
    sql.exec(
      "INSERT INTO session VALUES (1, ?, 'org-a', 'bob', 'general', 'awaiting_approval', NULL, ?, ?, ?)",
      id,
      JSON.stringify(turn),
      AT,
      AT,
    );
    sql.exec(
      "INSERT INTO messages (turn_id, role, content, tool_calls_json, tool_call_id, kind, created_at) VALUES ('t1', 'user', ?, NULL, NULL, 'message', ?), ('t1', 'assistant', NULL, ?, NULL, 'message', ?)",
      `Greet Dana ${marker}`,
      AT,
      JSON.stringify([{ id: "call_1", name: "agent_hello_world", arguments: '{"name":"Dana"}' }]),
      AT,
    );
    sql.exec(
      "INSERT INTO tool_calls (turn_id, id, batch, position, data_json) VALUES ('t1', 'call_1', 1, 0, ?)",
      JSON.stringify(call),
    );
    for (const frame of [
      { type: "turn_started", turnId: "t1", clientMessageId: null },
      { type: "tool_call_started", turnId: "t1", toolCall: publicCall },
      { type: "approval_required", turnId: "t1", toolCalls: [publicCall] },
    ]) {
      sql.exec("INSERT INTO events (turn_id, frame_json, created_at) VALUES ('t1', ?, ?)", JSON.stringify(frame), AT);
    }
    return id;
  });
  await evictDurableObject(stub);
  return sessionId;
}

describe("the session object's versioned schema", () => {
  it("migrates an object written before the schema had a version to the newest version, with its indexes", async () => {
    const id = await writtenBeforeVersions();
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    const { version, indexes } = await runInDurableObject(stub, (_instance: AgentSession, state) => ({
      version: sessionSchemaVersion(state.storage.sql),
      indexes: state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .toArray()
        .map((r) => r.name),
    }));
    expect(version).toBe(SESSION_SCHEMA_VERSION);
    expect(indexes).toEqual(["messages_by_turn", "turn_steps_by_turn", "turns_by_end"]);
  });

  it("reads back, after migrating, everything the object held", async () => {
    const id = await writtenBeforeVersions();
    const view = await getSession(id);
    expect({
      mode: view.mode,
      status: view.status,
      conversation: view.conversation.map((m) => [m.role, m.content, m.kind]),
      turns: view.turns.map((t) => [t.turnId, t.status, t.iterations]),
      modeHistory: view.modeHistory.map((h) => [h.from, h.to, h.reason]),
      artifacts: view.artifacts.map((a) => [a.id, a.title]),
    }).toEqual({
      mode: "workspace",
      status: "idle",
      conversation: [
        ["user", "Hello", "message"],
        ["assistant", "Hi there.", "answer"],
      ],
      turns: [["t1", "completed", 1]],
      modeHistory: [["general", "workspace", "files"]],
      artifacts: [["a1", "A record"]],
    });
  });

  it("adds what older tables lack: a ticket issued after migrating records the key that asked for it", async () => {
    const id = await writtenBeforeVersions();
    const issued = await call("POST", `/context/sessions/${id}/ws-ticket`);
    expect(issued.status).toBe(201);
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    const keys = await runInDurableObject(stub, (_instance: AgentSession, state) =>
      state.storage.sql
        .exec<{ key_id: string }>("SELECT key_id FROM ws_tickets")
        .toArray()
        .map((r) => r.key_id),
    );
    expect(keys).toEqual(["chat"]);
  });

  it("runs each migration once: a restarted object's storage stays at the newest version and keeps its rows", async () => {
    const id = await writtenBeforeVersions();
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    await getSession(id);
    await evictDurableObject(stub);
    const view = await getSession(id);
    const version = await runInDurableObject(stub, (_instance: AgentSession, state) =>
      sessionSchemaVersion(state.storage.sql),
    );
    expect([version, view.conversation.length]).toEqual([SESSION_SCHEMA_VERSION, 2]);
  });

  it("resumes, after migrating, a turn the object left waiting for approval", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello, Dana." }]);
    const id = await pausedBeforeVersions(script.marker);
    const waiting = await getSession(id);
    expect([waiting.status, waiting.pendingToolCalls.map((c) => [c.id, c.approval])]).toEqual([
      "awaiting_approval",
      [["call_1", "pending"]],
    ]);
    const resumed = await approve(id, [{ toolCallId: "call_1", approved: true }]);
    expect(resumed.status).toBe(200);
    expect(resumed.json).toMatchObject({ status: "completed", text: "Hello, Dana." });
  });

  it("replays, after migrating, the frames the object logged before", async () => {
    const id = await pausedBeforeVersions("no-model-call");
    const socket = await openSocket(id, 0);
    const replayed = await socket.waitForType("approval_required");
    socket.close();
    expect(replayed).toMatchObject({ seq: 3, turnId: "t1", toolCalls: [{ id: "call_1", approval: "pending" }] });
  });
});

// Each D1 table has one module that owns its SQL (and its row codec): no other file of src/ writes the table, and
// none reads it but a module whose own statement joins it, listed below with why (one round trip on a hot path).
// A table added by a migration needs its owner here; SQL naming a table through a variable cannot be checked, so
// it is refused. The scan reads SQL keywords in capitals, as every statement in src/ spells them.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
const MIGRATIONS = join(ROOT, "migrations");

/** Each table and the one module with its SQL. */
const OWNERS: Record<string, string> = {
  a2a_tasks: "src/a2a/task-index.ts",
  agent_responses: "src/session/response-store.ts",
  agent_threads: "src/session/thread-head.ts",
  api_keys: "src/auth/api-keys.ts",
  audit_log: "src/tenancy/audit-log.ts",
  browser_sessions: "src/auth/browser-sessions.ts",
  eval_datasets: "src/evals/eval-store.ts",
  eval_runs: "src/evals/eval-store.ts",
  guardrail_counts: "src/guardrails/guardrail-counts.ts",
  hidden_modes: "src/modes/catalog-service.ts",
  idempotency_keys: "src/jobs/idempotency-store.ts",
  mcp_servers: "src/mcp/mcp-server-registry.ts",
  memories: "src/memory/memory-store.ts",
  message_index: "src/search/message-index.ts",
  model_routes: "src/routing/model-route-store.ts",
  modes: "src/modes/catalog-service.ts",
  mode_versions: "src/modes/mode-versions.ts",
  oauth_grants: "src/auth/oauth-grants.ts",
  oauth_rotated_refresh_tokens: "src/auth/refresh-token-reuse.ts",
  org_guardrails: "src/guardrails/guardrail-policy.ts",
  org_secrets: "src/tenancy/org-secrets.ts",
  org_settings: "src/memory/memory-policy.ts",
  schedule_runs: "src/jobs/schedule-rows.ts",
  schedules: "src/jobs/schedule-rows.ts",
  session_index: "src/session/session-index.ts",
  sign_in_flows: "src/auth/oidc.ts",
  system_prompts: "src/prompts/system-prompt-store.ts",
  usage_records: "src/metering/usage-records.ts",
  users: "src/auth/users.ts",
  webhook_attempts: "src/webhooks/delivery-store.ts",
  webhook_deliveries: "src/webhooks/delivery-store.ts",
  webhook_endpoints: "src/webhooks/endpoint-store.ts",
};

/** Tables a module reads inside its own statements (a join or a subquery), never writes. */
const JOINED_READS: Record<string, readonly string[]> = {
  // A key's lookup on every request reads its user's disabled_at in the same statement.
  // A schedule's run or a socket's frame reads its holder's standing in one statement: the key, the user, and for a
  // person signed in by single sign-on the scopes of their latest sign-in.
  "src/auth/api-keys.ts": ["users", "browser_sessions"],
  // A session cookie's lookup on every request reads its user and the key it signed in with.
  "src/auth/browser-sessions.ts": ["users", "api_keys"],
  // A grant's lookup reads its user's disabled_at.
  "src/auth/oauth-grants.ts": ["users"],
  // A kept response is its session owner's, and is the latest while its head is its thread's head.
  "src/session/response-store.ts": ["session_index", "agent_threads"],
  // A task is indexed under its session's owner, whoever started it (an admin, in a member's context).
  "src/a2a/task-index.ts": ["session_index"],
  // A search's page carries its sessions' titles, and a session's messages are indexed only while it is listed.
  "src/search/message-index.ts": ["session_index"],
  // The modes that name a route or a server, but for an org with its own of that name.
  "src/modes/catalog-service.ts": ["model_routes", "mcp_servers"],
  // A change's version row takes its number from the mode row the same batch just wrote.
  "src/modes/mode-versions.ts": ["modes"],
};

/** A statement naming a table: writes (DELETE FROM, INSERT ... INTO, REPLACE INTO, UPDATE) and reads (FROM, JOIN). */
const SQL_TABLE =
  /\b(DELETE\s+FROM|INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|UPDATE|FROM|JOIN)\s+(\$\{|[a-z_][a-z0-9_]*\b)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** The tables the migrations leave: created, less those dropped (a `_new` copy renamed into place). */
function migratedTables(): string[] {
  const tables = new Set<string>();
  for (const name of readdirSync(MIGRATIONS)
    .filter((n) => n.endsWith(".sql"))
    .sort()) {
    const sql = readFileSync(join(MIGRATIONS, name), "utf8");
    for (const m of sql.matchAll(/CREATE TABLE(?: IF NOT EXISTS)?\s+([a-z_][a-z0-9_]*)/gi))
      tables.add((m[1] ?? "").toLowerCase());
    for (const m of sql.matchAll(/DROP TABLE(?: IF EXISTS)?\s+([a-z_][a-z0-9_]*)/gi))
      tables.delete((m[1] ?? "").toLowerCase());
    for (const m of sql.matchAll(/ALTER TABLE\s+([a-z_][a-z0-9_]*)\s+RENAME TO\s+([a-z_][a-z0-9_]*)/gi)) {
      tables.delete((m[1] ?? "").toLowerCase());
      tables.add((m[2] ?? "").toLowerCase());
    }
  }
  return [...tables].sort();
}

interface Mention {
  file: string;
  line: number;
  table: string;
  write: boolean;
}

function mentions(): Mention[] {
  const tables = new Set(Object.keys(OWNERS));
  const found: Mention[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(ROOT, path);
    const text = readFileSync(path, "utf8");
    for (const m of text.matchAll(SQL_TABLE)) {
      const table = m[2] ?? "";
      if (table !== "${" && !tables.has(table)) continue;
      const line = text.slice(0, m.index).split("\n").length;
      found.push({ file, line, table, write: !/^(FROM|JOIN)$/.test(m[1] ?? "") });
    }
  }
  return found;
}

describe("each D1 table's SQL lives in its owner module", () => {
  it("names an owner, an existing file, for every table the migrations make", () => {
    expect(migratedTables()).toEqual(Object.keys(OWNERS).sort());
    const missing = Object.values(OWNERS).filter((file) => !statSync(join(ROOT, file), { throwIfNoEntry: false }));
    expect(missing).toEqual([]);
  });

  it("finds no statement naming a table outside its owner but the listed joined reads", () => {
    const strays = mentions()
      .filter(({ file, table, write }) => {
        if (table === "${") return true;
        if (OWNERS[table] === file) return false;
        return write || !(JOINED_READS[file] ?? []).includes(table);
      })
      .map(({ file, line, table, write }) => `${file}:${line} ${write ? "writes" : "reads"} ${table}`);
    expect(strays).toEqual([]);
  });

  it("sees each owner's own SQL, so the scan cannot pass by reading nothing", () => {
    const owned = new Set(
      mentions()
        .filter(({ file, table }) => OWNERS[table] === file)
        .map(({ table }) => table),
    );
    expect([...owned].sort()).toEqual(Object.keys(OWNERS).sort());
  });
});

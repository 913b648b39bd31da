// AgentModeCatalogService: the mode catalog in D1 as one org sees it, read with every row checked by zod. An org
// sees the deployment's modes (but those it hides) and its own, its own instead of the deployment's of the same key;
// its default is its own default when it has one, else the deployment's default (or the org's mode of that key).
// The one module with the SQL of modes and hidden_modes: the catalog's reads, its writes, and who names a route or
// a server.
import { z } from "zod";
import type { Db } from "../db";
import { quoted } from "../quote";
import { firstProblem } from "../zod-issues";
import { type AgentMode, AgentModeRow } from "./agent-mode";
import type { ModeUpsertBody } from "./mode-upsert";
import { deleteVersionsStatement, keepVersionStatement, newVersionStatement, snapshotText } from "./mode-versions";

/** TUL-010 §2's `IAgentModeCatalogService`, plus the look-ups sessions need. */
export interface AgentModeCatalogService {
  getAllModes(signal?: AbortSignal): Promise<AgentMode[]>;
  getMode(key: string, signal?: AbortSignal): Promise<AgentMode | null>;
  getDefaultMode(signal?: AbortSignal): Promise<AgentMode>;
}

/** "Unknown mode 'x'. Known modes: a, b." with the input quoted bounded: the one wording of this refusal. */
export async function unknownModeMessage(catalog: AgentModeCatalogService, mode: string): Promise<string> {
  const known = (await catalog.getAllModes()).map((m) => m.key).join(", ");
  return `Unknown mode ${quoted(mode)}. Known modes: ${known}.`;
}

/** A catalog row that does not parse: the message names the row and the field. */
export class ModeCatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModeCatalogError";
  }
}

const COLUMNS =
  "id, org, key, display_name, description, system_prompt_summary, system_prompt, human_role_hints, example_utterances, tools, approval_required_tools, model_route, memory, version, created_at, updated_at";

/**
 * The modes org `?1` sees, each with `is_default` as it holds in that view: its own modes, and the deployment's
 * it neither has a mode of the same key of nor hides (the deployment's default is hidden only from an org with a
 * default of its own). Its default is its own default when it has one, else the mode of the deployment's default's key.
 */
const VIEW = `SELECT m.id, m.org, m.key, m.display_name, m.description, m.system_prompt_summary, m.system_prompt,
    m.human_role_hints, m.example_utterances, m.tools, m.approval_required_tools, m.model_route, m.memory, m.version,
    m.created_at, m.updated_at,
    COALESCE(CASE WHEN EXISTS (SELECT 1 FROM modes d WHERE d.org = ?1 AND d.is_default = 1)
      THEN m.org = ?1 AND m.is_default = 1
      ELSE m.key = (SELECT d.key FROM modes d WHERE d.org = '' AND d.is_default = 1) END, 0) AS is_default
  FROM modes m
  WHERE (m.org = ?1 OR (m.org = ''
    AND NOT EXISTS (SELECT 1 FROM modes o WHERE ?1 != '' AND o.org = ?1 AND o.key = m.key)
    AND ((m.is_default = 1 AND NOT EXISTS (SELECT 1 FROM modes d WHERE d.org = ?1 AND d.is_default = 1))
      OR NOT EXISTS (SELECT 1 FROM hidden_modes h WHERE h.org = ?1 AND h.key = m.key))))`;

export class D1AgentModeCatalogService implements AgentModeCatalogService {
  /** `org`'s view of the catalog; null: the deployment's own modes alone. */
  constructor(
    private readonly db: Db,
    private readonly org: string | null,
  ) {}

  async getAllModes(signal?: AbortSignal): Promise<AgentMode[]> {
    signal?.throwIfAborted();
    const { results } = await this.db
      .prepare(`${VIEW} ORDER BY is_default DESC, m.key ASC`)
      .bind(this.org ?? "")
      .all<Record<string, unknown>>();
    signal?.throwIfAborted();
    return results.map(parseModeRow);
  }

  async getMode(key: string, signal?: AbortSignal): Promise<AgentMode | null> {
    signal?.throwIfAborted();
    const row = await modeStatement(this.db, this.org, key).first<Record<string, unknown>>();
    return row ? parseModeRow(row) : null;
  }

  async getDefaultMode(signal?: AbortSignal): Promise<AgentMode> {
    const found = (await this.getAllModes(signal)).find((mode) => mode.isDefault);
    if (!found) throw new ModeCatalogError("The mode catalog has no default mode.");
    return found;
  }
}

/** The query for one mode by key in `org`'s view, to run alone or in a batch with others (one round trip). */
export function modeStatement(db: Db, org: string | null, key: string): D1PreparedStatement {
  return db.prepare(`${VIEW} AND m.key = ?2`).bind(org ?? "", key);
}

/** The query for one mode of `owner` (an org, or null: the deployment) by key, as stored, outside any view. */
export function ownedModeStatement(db: Db, owner: string | null, key: string): D1PreparedStatement {
  return db.prepare(`SELECT ${COLUMNS}, is_default FROM modes WHERE org = ? AND key = ?`).bind(owner ?? "", key);
}

/** `catalog`, answering `mode`'s key with `mode` (read moments ago by whoever sent it) instead of asking again. */
export function catalogKnowing(catalog: AgentModeCatalogService, mode: AgentMode): AgentModeCatalogService {
  return {
    getAllModes: (signal) => catalog.getAllModes(signal),
    getMode: (key, signal) => (key === mode.key ? Promise.resolve(mode) : catalog.getMode(key, signal)),
    getDefaultMode: (signal) => (mode.isDefault ? Promise.resolve(mode) : catalog.getDefaultMode(signal)),
  };
}

export function parseModeRow(row: Record<string, unknown>): AgentMode {
  const parsed = AgentModeRow.safeParse(row);
  if (parsed.success) return parsed.data;
  const problem = firstProblem(parsed.error);
  const name = typeof row.key === "string" ? `'${row.key}'` : "(no key)";
  const id = typeof row.id === "string" ? ` (id ${row.id})` : "";
  throw new ModeCatalogError(`Mode catalog row ${name}${id} is corrupt: ${problem.param ?? "row"} ${problem.detail}.`);
}

function newModeId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

const nullableJson = (value: string[] | null) => (value === null ? null : JSON.stringify(value));

/** Who changes a mode, and the mode as it was (null: a new one): its version rows are written with the change. */
export interface ModeChangeBy {
  existing: AgentMode | null;
  by: string;
}

/**
 * Inserts or updates `owner`'s mode (an org's, or null: the deployment's) in one batch (one transaction), with its
 * new version's row (and the version before it, when that has none yet) and `also` (its audit row). Making it the
 * default clears that owner's previous default in the same batch, so the single-default index never sees two.
 */
export async function upsertMode(
  db: Db,
  owner: string | null,
  key: string,
  body: ModeUpsertBody,
  also: D1PreparedStatement[] = [],
  change: ModeChangeBy = { existing: null, by: "" },
): Promise<AgentMode> {
  const org = owner ?? "";
  const statements: D1PreparedStatement[] = [];
  // The mode before the change is kept as its version when it has no row yet (never changed since 0035).
  if (change.existing) statements.push(keepVersionStatement(db, change.existing));
  const at = new Date().toISOString();
  const id = change.existing?.id ?? newModeId();
  const snapshot = snapshotText({
    ...body,
    id,
    key,
    org: owner,
    createdAt: change.existing?.createdAt ?? at,
    updatedAt: at,
  });
  if (body.isDefault)
    statements.push(
      db.prepare("UPDATE modes SET is_default = 0 WHERE org = ? AND is_default = 1 AND key != ?").bind(org, key),
    );
  statements.push(
    db
      .prepare(
        `INSERT INTO modes (id, org, key, display_name, description, system_prompt_summary, system_prompt, is_default,
           human_role_hints, example_utterances, tools, approval_required_tools, model_route, memory, created_at,
           updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (org, key) DO UPDATE SET
           display_name = excluded.display_name, description = excluded.description,
           system_prompt_summary = excluded.system_prompt_summary, system_prompt = excluded.system_prompt,
           is_default = excluded.is_default, human_role_hints = excluded.human_role_hints,
           example_utterances = excluded.example_utterances, tools = excluded.tools,
           approval_required_tools = excluded.approval_required_tools, model_route = excluded.model_route,
           memory = excluded.memory,
           version = modes.version + 1, updated_at = excluded.updated_at`,
      )
      .bind(
        id,
        org,
        key,
        body.displayName,
        body.description,
        body.systemPromptSummary,
        body.systemPrompt,
        body.isDefault ? 1 : 0,
        nullableJson(body.humanRoleHints),
        nullableJson(body.exampleUtterances),
        JSON.stringify(body.tools),
        JSON.stringify(body.approvalRequiredTools),
        body.modelRoute,
        body.memory ? 1 : 0,
        at,
        at,
      ),
    newVersionStatement(db, owner, key, snapshot, change.by),
    ...also,
    ownedModeStatement(db, owner, key),
  );
  const results = await db.batch<Record<string, unknown>>(statements);
  const row = results.at(-1)?.results[0];
  if (!row) throw new Error(`Mode '${key}' was not found after it was written.`);
  return parseModeRow(row);
}

/** Hides (or shows again) the deployment's mode `key` in `org`'s view, with `also` in the same batch (its audit row). */
export async function setModeHidden(
  db: Db,
  org: string,
  key: string,
  hidden: boolean,
  also: D1PreparedStatement[] = [],
): Promise<void> {
  const write = db
    .prepare(
      hidden
        ? "INSERT OR IGNORE INTO hidden_modes (org, key) VALUES (?, ?)"
        : "DELETE FROM hidden_modes WHERE org = ? AND key = ?",
    )
    .bind(org, key);
  await db.batch([write, ...also]);
}

/** The deployment's modes `org` hides. */
export async function hiddenModes(db: Db, org: string): Promise<Set<string>> {
  const { results } = await db.prepare("SELECT key FROM hidden_modes WHERE org = ?").bind(org).all();
  return new Set(results.map((r) => z.object({ key: z.string() }).parse(r).key));
}

const OrgKeyRow = z.object({ org: z.string(), key: z.string() });

/**
 * The modes (org and key) whose turns use the route `route` of `owner` (an org, or "": the deployment's): the
 * owner's own, and for the deployment's route every org's mode naming it without a route of its own of that name.
 */
export async function modesNamingRoute(db: Db, route: string, owner: string): Promise<{ org: string; key: string }[]> {
  const { results } = await db
    .prepare(
      `SELECT m.org, m.key FROM modes m WHERE m.model_route = ?1 AND (m.org = ?2 OR (?2 = '' AND NOT EXISTS
         (SELECT 1 FROM model_routes r WHERE r.org = m.org AND r.name = ?1))) ORDER BY m.org, m.key`,
    )
    .bind(route, owner)
    .all();
  return results.map((r) => OrgKeyRow.parse(r));
}

/**
 * The modes (org, key and tools) that may name the MCP server `server` of `owner` in their tools (`mcp:<server>...`):
 * the owner's own, and for the deployment's server every org's mode without a server of its own of that name.
 */
export async function modesNamingServer(
  db: Db,
  server: string,
  owner: string,
): Promise<{ org: string; key: string; tools: string[] }[]> {
  const { results } = await db
    .prepare(
      `SELECT DISTINCT m.org, m.key, m.tools FROM modes m, json_each(m.tools) t
       WHERE substr(t.value, 1, length(?3)) = ?3 AND (m.org = ?2 OR (?2 = '' AND NOT EXISTS
         (SELECT 1 FROM mcp_servers s WHERE s.org = m.org AND s.name = ?1))) ORDER BY m.org, m.key`,
    )
    .bind(server, owner, `mcp:${server}`)
    .all();
  return results.map((r) =>
    OrgKeyRow.extend({ tools: z.string().transform((text) => z.array(z.string()).parse(JSON.parse(text))) }).parse(r),
  );
}

/** Removes `owner`'s mode `key` (an org's, or null: the deployment's), with `also` in the same batch (its audit row). */
export async function deleteMode(
  db: Db,
  owner: string | null,
  key: string,
  also: D1PreparedStatement[] = [],
): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM modes WHERE org = ? AND key = ?").bind(owner ?? "", key),
    deleteVersionsStatement(db, owner, key),
    ...also,
  ]);
}

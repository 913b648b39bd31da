// AgentModeCatalogService: the mode catalog in D1, read with every row checked by zod.
import type { Db } from "../db";
import { quoted } from "../quote";
import { firstProblem } from "../zod-issues";
import { type AgentMode, AgentModeRow } from "./agent-mode";

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
  "id, key, display_name, description, system_prompt_summary, system_prompt, is_default, human_role_hints, example_utterances, tools, approval_required_tools, model_route, created_at, updated_at";

export class D1AgentModeCatalogService implements AgentModeCatalogService {
  constructor(private readonly db: Db) {}

  async getAllModes(signal?: AbortSignal): Promise<AgentMode[]> {
    signal?.throwIfAborted();
    const { results } = await this.db
      .prepare(`SELECT ${COLUMNS} FROM modes ORDER BY is_default DESC, key ASC`)
      .all<Record<string, unknown>>();
    signal?.throwIfAborted();
    return results.map(parseModeRow);
  }

  async getMode(key: string, signal?: AbortSignal): Promise<AgentMode | null> {
    signal?.throwIfAborted();
    const row = await modeStatement(this.db, key).first<Record<string, unknown>>();
    return row ? parseModeRow(row) : null;
  }

  async getDefaultMode(signal?: AbortSignal): Promise<AgentMode> {
    signal?.throwIfAborted();
    const row = await this.db
      .prepare(`SELECT ${COLUMNS} FROM modes WHERE is_default = 1`)
      .first<Record<string, unknown>>();
    if (!row) throw new ModeCatalogError("The mode catalog has no default mode.");
    return parseModeRow(row);
  }
}

/** The query for one mode by key, to run alone or in a batch with others (one round trip). */
export function modeStatement(db: Db, key: string): D1PreparedStatement {
  return db.prepare(`SELECT ${COLUMNS} FROM modes WHERE key = ?`).bind(key);
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

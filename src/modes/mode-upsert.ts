// Adding or changing a catalog mode (PUT /admin/modes/:key): the body schema and the D1 write of the mode of one
// owner (an org, or the deployment's), and an org hiding a deployment mode from its own view.

import { z } from "zod";
import type { Db } from "../db";
import { DEFAULT_ROUTE, ROUTE_NAME_PATTERN } from "../routing/model-routes";
import { typedName, typedProse } from "../typed-name";
import type { AgentMode } from "./agent-mode";
import { ownedModeStatement, parseModeRow } from "./catalog-service";
import { MCP_REFERENCE } from "./tool-references";

const text = (max: number) =>
  z.string().trim().min(1, "must not be empty").max(max, `must be at most ${max} characters`);
/** A tool's name, or a reference to an MCP server's tools (`mcp:<server>`, `mcp:<server>/<tool>`). */
const toolName = z
  .string()
  .refine(
    (name) => /^[a-zA-Z0-9_-]+$/.test(name) || MCP_REFERENCE.test(name),
    "must be a tool name or mcp:<server>[/<tool>]",
  );

export const ModeUpsertBody = z.strictObject({
  displayName: text(100).superRefine(typedName),
  description: text(2_000).superRefine(typedProse),
  systemPromptSummary: z.string().max(2_000).default(""),
  systemPrompt: text(50_000),
  isDefault: z.boolean().default(false),
  humanRoleHints: z.array(text(200)).max(50).nullable().default(null),
  exampleUtterances: z.array(text(1_000)).max(50).nullable().default(null),
  tools: z.array(toolName).max(100).default([]),
  approvalRequiredTools: z.array(toolName).max(100).default([]),
  /** The model route its turns use; it must exist (`default` always does). */
  modelRoute: z
    .string()
    .regex(ROUTE_NAME_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter")
    .default(DEFAULT_ROUTE),
});
export type ModeUpsertBody = z.output<typeof ModeUpsertBody>;

function newModeId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

const nullableJson = (value: string[] | null) => (value === null ? null : JSON.stringify(value));

/** The body of a change that only shows or hides a deployment mode in the caller's org (`{"enabled": false}`). */
export const ModeVisibilityBody = z.strictObject({ enabled: z.boolean({ error: "must be true or false" }) });
export type ModeVisibilityBody = z.output<typeof ModeVisibilityBody>;

/**
 * Inserts or updates `owner`'s mode (an org's, or null: the deployment's) in one batch (one transaction), with
 * `also` (its audit row). Making it the default clears that owner's previous default in the same batch, so the
 * single-default index never sees two.
 */
export async function upsertMode(
  db: Db,
  owner: string | null,
  key: string,
  body: ModeUpsertBody,
  also: D1PreparedStatement[] = [],
): Promise<AgentMode> {
  const org = owner ?? "";
  const statements: D1PreparedStatement[] = [];
  if (body.isDefault)
    statements.push(
      db.prepare("UPDATE modes SET is_default = 0 WHERE org = ? AND is_default = 1 AND key != ?").bind(org, key),
    );
  statements.push(
    db
      .prepare(
        `INSERT INTO modes (id, org, key, display_name, description, system_prompt_summary, system_prompt, is_default,
           human_role_hints, example_utterances, tools, approval_required_tools, model_route)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (org, key) DO UPDATE SET
           display_name = excluded.display_name, description = excluded.description,
           system_prompt_summary = excluded.system_prompt_summary, system_prompt = excluded.system_prompt,
           is_default = excluded.is_default, human_role_hints = excluded.human_role_hints,
           example_utterances = excluded.example_utterances, tools = excluded.tools,
           approval_required_tools = excluded.approval_required_tools, model_route = excluded.model_route,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
      )
      .bind(
        newModeId(),
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
      ),
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
  const { results } = await db.prepare("SELECT key FROM hidden_modes WHERE org = ?").bind(org).all<{ key: string }>();
  return new Set(results.map((r) => r.key));
}

/** Removes `owner`'s mode `key` (an org's, or null: the deployment's), with `also` in the same batch (its audit row). */
export async function deleteMode(
  db: Db,
  owner: string | null,
  key: string,
  also: D1PreparedStatement[] = [],
): Promise<void> {
  await db.batch([db.prepare("DELETE FROM modes WHERE org = ? AND key = ?").bind(owner ?? "", key), ...also]);
}

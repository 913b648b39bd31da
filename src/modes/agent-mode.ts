// AgentModeSummary (TUL-010 §2) and the full AgentMode row of the D1 catalog, parsed with zod.
import { z } from "zod";
import { KEY_NAME_PATTERN } from "../key-name";

/** TUL-010 §3.3: the fields every mode descriptor carries, in camelCase. */
export const AgentModeSummary = z.object({
  id: z.string(),
  key: z.string(),
  displayName: z.string(),
  description: z.string(),
  systemPromptSummary: z.string(),
  isDefault: z.boolean(),
  humanRoleHints: z.array(z.string()).nullable(),
  exampleUtterances: z.array(z.string()).nullable(),
});
export type AgentModeSummary = z.infer<typeof AgentModeSummary>;

/** A catalog entry: the summary plus what the agent loop needs. */
export const AgentMode = AgentModeSummary.extend({
  /** The text the agent gets in this mode. */
  systemPrompt: z.string(),
  /** Tool names this mode offers (agent_change_mode and agent_list_modes are offered in every mode). */
  tools: z.array(z.string()),
  /** Tool names whose calls pause for approval in this mode, beside tools that always need it. */
  approvalRequiredTools: z.array(z.string()),
  /** The model route its turns use (`default`: the one the LLM_* vars make). */
  modelRoute: z.string(),
  /** Memory in this mode (docs/memory.md): its memory tools and the prompt's section, when the org's memory is on too. */
  memory: z.boolean(),
  /** The org that made it (visible to that org only), or null: the deployment's, visible to every org. */
  org: z.string().nullable(),
  /** Bumped by every change through the admin API (docs/modes.md, "Versions"); 1 for a mode never changed since. */
  version: z.number().int().min(1),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type AgentMode = z.infer<typeof AgentMode>;

export const MODE_KEY_PATTERN = KEY_NAME_PATTERN;

const jsonText = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: "custom", message: "is not valid JSON" });
    return z.NEVER;
  }
});

const jsonStringArray = jsonText.pipe(z.array(z.string()));

/** One row of the `modes` table. */
export const AgentModeRow = z
  .object({
    id: z.string().regex(/^[0-9a-f]{32}$/, "must be a 32-hex GUID without hyphens"),
    org: z.string(),
    key: z.string().regex(MODE_KEY_PATTERN, "must be a lowercase key"),
    display_name: z.string().min(1),
    description: z.string().min(1),
    system_prompt_summary: z.string(),
    system_prompt: z.string().min(1),
    is_default: z.union([z.literal(0), z.literal(1)]),
    human_role_hints: jsonStringArray.nullable(),
    example_utterances: jsonStringArray.nullable(),
    tools: jsonStringArray,
    approval_required_tools: jsonStringArray,
    model_route: z.string().min(1),
    memory: z.union([z.literal(0), z.literal(1)]),
    version: z.number().int().min(1),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (row): AgentMode => ({
      id: row.id,
      key: row.key,
      displayName: row.display_name,
      description: row.description,
      systemPromptSummary: row.system_prompt_summary,
      isDefault: row.is_default === 1,
      humanRoleHints: row.human_role_hints,
      exampleUtterances: row.example_utterances,
      systemPrompt: row.system_prompt,
      tools: row.tools,
      approvalRequiredTools: row.approval_required_tools,
      modelRoute: row.model_route,
      memory: row.memory === 1,
      org: row.org === "" ? null : row.org,
      version: row.version,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  );

/** Exactly TUL-010 §3.3's fields; `exampleUtterances` is null unless examples are asked for. */
export function toModeSummary(mode: AgentModeSummary, includeExamples: boolean): AgentModeSummary {
  return {
    id: mode.id,
    key: mode.key,
    displayName: mode.displayName,
    description: mode.description,
    systemPromptSummary: mode.systemPromptSummary,
    isDefault: mode.isDefault,
    humanRoleHints: mode.humanRoleHints,
    exampleUtterances: includeExamples ? mode.exampleUtterances : null,
  };
}

// Adding or changing a catalog mode (PUT /admin/modes/:key): the body schemas of a mode of one owner (an org, or
// the deployment's) and of an org hiding a deployment mode from its own view; their D1 writes are the catalog's
// (catalog-service.ts, the one module with the SQL of modes and hidden_modes).

import { z } from "zod";
import type { Guardrail } from "../guardrails/guardrail-config";
import { DEFAULT_ROUTE, ROUTE_NAME_PATTERN } from "../routing/model-routes";
import { typedName, typedProse } from "../typed-name";
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
  /** Memory in this mode (docs/memory.md): on unless turned off; the org's switch must be on too. */
  memory: z.boolean({ error: "must be true or false" }).default(true),
  /**
   * Its guardrails (docs/guardrails.md): each entry a Guardrail, checked by parseGuardrails in the route (its
   * errors are `invalid_guardrail`, naming `guardrails[i].field`).
   */
  guardrails: z
    .array(z.unknown())
    .default([])
    .meta({ description: "Guardrail entries (the Guardrail schema), over the org's own (GET /admin/guardrails)." }),
});
/** A mode as written: the body with its guardrails parsed (none when left out). */
export type ModeUpsertBody = Omit<z.output<typeof ModeUpsertBody>, "guardrails"> & { guardrails?: Guardrail[] };

/** The body of a change that only shows or hides a deployment mode in the caller's org (`{"enabled": false}`). */
export const ModeVisibilityBody = z.strictObject({ enabled: z.boolean({ error: "must be true or false" }) });
export type ModeVisibilityBody = z.output<typeof ModeVisibilityBody>;

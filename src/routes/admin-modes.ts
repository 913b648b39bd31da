// /admin/modes (admin scope): the modes an admin's org sees and may manage: the deployment's (an operator changes
// them; an org may hide one from its own view with `{"enabled": false}`) and the org's own (its admins change them;
// its people get its own instead of the deployment's of a key). Every rule zod can state (the key, known tool
// names, approvals only for offered tools) is in the schema; the default flag, the route and the MCP servers a mode
// names need D1. Every change is in the audit log.

import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import type { Db } from "../db";
import { ApiError } from "../errors";
import { parseGuardrails } from "../guardrails/guardrail-config";
import { type AppContext, BEARER, errors, json, jsonBody, parseWith, routes } from "../http";
import { McpServerRegistry, serversSeenBy } from "../mcp/mcp-server-registry";
import { AgentMode, MODE_KEY_PATTERN } from "../modes/agent-mode";
import {
  D1AgentModeCatalogService,
  deleteMode,
  hiddenModes,
  ownedModeStatement,
  parseModeRow,
  setModeHidden,
  upsertMode,
} from "../modes/catalog-service";
import { ModeUpsertBody, ModeVisibilityBody } from "../modes/mode-upsert";
import { parseMcpReference } from "../modes/tool-references";
import { quoted } from "../quote";
import { ModelRouteRegistry, routesSeenBy } from "../routing/model-route-store";
import { DEFAULT_ROUTE } from "../routing/model-routes";
import { forgetTurnReads } from "../session/session-model";
import type { AuditAction } from "../tenancy/audit-log";
import { type Owner, OwnerQuery, writeOwner } from "../tenancy/ownership";
import { ALWAYS_OFFERED_TOOLS, PRODUCTION_TOOL_NAMES } from "../tools";
import { changeRow } from "./record-change";

export const ModeKey = z.object({
  key: z.string().regex(MODE_KEY_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter"),
});

/** The body, with the rules that name tools: each must be registered, and one that needs approval offered. */
export const ModeBody = ModeUpsertBody.superRefine((body, ctx) => {
  body.tools.forEach((name, index) => {
    if (!PRODUCTION_TOOL_NAMES.includes(name) && !parseMcpReference(name)) {
      ctx.addIssue({
        code: "custom",
        path: ["tools", index],
        message: `unknown tool ${quoted(name)}; known tools: ${PRODUCTION_TOOL_NAMES.join(", ")}`,
      });
    }
  });
  body.approvalRequiredTools.forEach((name, index) => {
    const reference = parseMcpReference(name);
    const offered =
      body.tools.includes(name) ||
      ALWAYS_OFFERED_TOOLS.includes(name) ||
      (reference !== null && body.tools.includes(`mcp:${reference.server}`));
    if (!offered) {
      ctx.addIssue({
        code: "custom",
        path: ["approvalRequiredTools", index],
        message: `${quoted(name)} needs approval but the mode does not offer it; list it in 'tools' first`,
      });
    }
  });
});

/** Every `mcp:<server>` a mode of `owner` names must be a server it may offer (its tools are discovered by the session). */
async function checkMcpReferences(db: Db, owner: Owner, tools: string[]): Promise<void> {
  const registered = owner === null ? await new McpServerRegistry(db, null).list() : await serversSeenBy(db, owner);
  const servers = new Set(registered.map((s) => s.name));
  tools.forEach((name, index) => {
    const reference = parseMcpReference(name);
    if (reference && !servers.has(reference.server)) {
      throw new ApiError(
        "invalid_request",
        `Invalid 'tools.${index}' in the request body: no MCP server ${quoted(reference.server)} is registered; known: ${[...servers].join(", ") || "none"}.`,
        { param: `tools.${index}` },
      );
    }
  });
}

/** The route a mode of `owner` names must be one it may use: `default`, the deployment's, or its org's own. */
async function checkModelRoute(db: Db, owner: Owner, name: string): Promise<void> {
  if (name === DEFAULT_ROUTE) return;
  const usable = owner === null ? await new ModelRouteRegistry(db, null).list() : await routesSeenBy(db, owner);
  if (usable.some((r) => r.name === name)) return;
  const known = [DEFAULT_ROUTE, ...new Set(usable.map((r) => r.name))].join(", ");
  throw new ApiError(
    "invalid_request",
    `Invalid 'modelRoute' in the request body: no model route ${quoted(name)}; the routes are: ${known}.`,
    { param: "modelRoute" },
  );
}

/**
 * Writes `owner`'s mode `key` as `body` says (PUT, PATCH, a restore): the checks that need D1, then the mode, its new
 * version and its audit row (`action`) in one batch; the isolate's kept modes are forgotten.
 */
export async function writeMode(
  c: AppContext,
  change: { owner: Owner; key: string; body: ModeUpsertBody; existing: AgentMode | null; action: AuditAction },
): Promise<AgentMode> {
  const { owner, key, body, existing, action } = change;
  await checkMcpReferences(c.get("db"), owner, body.tools);
  await checkModelRoute(c.get("db"), owner, body.modelRoute);
  if (existing?.isDefault && !body.isDefault) {
    throw new ApiError(
      "invalid_request",
      `Mode ${quoted(key)} is the default mode; make another mode the default instead of clearing it here.`,
      { param: "isDefault" },
    );
  }
  const audit = changeRow(c, { org: owner, action, target: key, before: existing, after: { key, ...body } });
  const mode = await upsertMode(c.get("db"), owner, key, body, [audit], { existing, by: c.get("principal").user });
  forgetTurnReads(c.env.DB);
  const what = existing ? "Mode updated." : "Mode created.";
  c.get("logger").addCustomEvent("Message", `[admin_modes_${action.replace("mode.", "")}]`, what, [["mode", key]]);
  return mode;
}

/** A mode's body with its guardrails parsed (parseGuardrails: `invalid_guardrail` naming the entry and field). */
export function withGuardrails(written: z.output<typeof ModeBody>): ModeUpsertBody {
  const guardrails = parseGuardrails(written.guardrails, "guardrails");
  if (!guardrails.ok) throw ApiError.from(guardrails);
  return { ...written, guardrails: guardrails.value };
}

/** The fields of `mode` a PUT body carries, as it would send them (a PATCH or a restore starts from them). */
export function upsertFields(mode: AgentMode): Record<string, unknown> {
  const fields: Record<string, unknown> = mode;
  return Object.fromEntries(Object.keys(ModeUpsertBody.shape).map((field) => [field, fields[field]]));
}

/** The body: a whole mode, or `{"enabled": ...}` alone (showing or hiding one of the deployment's in the caller's org). */
const ModePutBody = z.union([ModeVisibilityBody, ModeBody]);

const modeAnswer = (description: string) =>
  json(z.object({ mode: AgentMode, enabled: z.boolean().optional() }), description);

const ManagedMode = AgentMode.extend({
  /** Shown to the org's people: false for a deployment mode the org hides. */
  enabled: z.boolean(),
});

/** What a mode's `tools` may name, for an editor to offer (the admin page's). */
const ModeTools = z.object({
  tools: z.array(
    z.object({
      name: z.string(),
      /** Offered in every mode whatever its list says (agent_change_mode, agent_list_modes). */
      alwaysOffered: z.boolean(),
    }),
  ),
});

/** Hides or shows the deployment's mode `key` in the caller's org. */
async function setVisibility(c: AppContext, key: string, enabled: boolean) {
  const { org } = c.get("principal");
  const [deployment, own, view] = await Promise.all([
    new D1AgentModeCatalogService(c.get("db"), null).getMode(key),
    ownedModeStatement(c.get("db"), org, key).first(),
    new D1AgentModeCatalogService(c.get("db"), org).getDefaultMode(),
  ]);
  if (!deployment) {
    if (own) {
      throw new ApiError(
        "invalid_request",
        `Mode ${quoted(key)} is your organization's own: 'enabled' shows or hides one of the deployment's modes.`,
        { param: "enabled" },
      );
    }
    throw new ApiError("mode_not_found", `Mode ${quoted(key)} not found.`);
  }
  if (!enabled && view.key === key && view.org === null) {
    throw new ApiError(
      "invalid_request",
      `Mode ${quoted(key)} is your organization's default mode; make a mode of your own the default before you hide it.`,
      { param: "enabled" },
    );
  }
  // Already so: nothing changes, nothing is recorded.
  if ((await hiddenModes(c.get("db"), org)).has(key) === !enabled) return c.json({ mode: deployment, enabled }, 200);
  const action = enabled ? "mode.show" : "mode.hide";
  await setModeHidden(c.get("db"), org, key, !enabled, [
    changeRow(c, { org, action, target: key, before: { enabled: !enabled }, after: { enabled } }),
  ]);
  forgetTurnReads(c.env.DB);
  return c.json({ mode: deployment, enabled }, 200);
}

export const adminModeRoutes = routes()
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/modes/{key}",
      tags: ["admin"],
      summary:
        "Add (201) or change (200) a mode: your organization's own, or (operators) the deployment's; or show or hide one of the deployment's in your organization (`{\"enabled\": false}`)",
      security: BEARER,
      middleware: [requireScope("admin")] as const,
      request: { params: ModeKey, query: OwnerQuery, ...jsonBody(ModePutBody, 'The mode, or `{"enabled": bool}`.') },
      responses: {
        200: modeAnswer("The mode was changed (or shown, or hidden)."),
        201: modeAnswer("The mode was added."),
        ...errors(400, 401, 403, 404, 413, 500),
      },
    }),
    async (c) => {
      const { key } = c.req.valid("param");
      const written = c.req.valid("json");
      if (!("displayName" in written)) return setVisibility(c, key, written.enabled);
      const body = withGuardrails(written);
      const seen = await new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getMode(key);
      const owner = writeOwner(c.get("principal"), "mode", key, seen, c.req.valid("query").owner);
      const existingRow = await ownedModeStatement(c.get("db"), owner, key).first<Record<string, unknown>>();
      const existing = existingRow ? parseModeRow(existingRow) : null;
      const mode = await writeMode(c, { owner, key, body, existing, action: "mode.put" });
      return existing ? c.json({ mode }, 200) : c.json({ mode }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "patch",
      path: "/admin/modes/{key}",
      tags: ["admin"],
      summary:
        "Change some fields of a mode (the others stay as they are): your organization's own, or (operators) the deployment's; a new version",
      security: BEARER,
      middleware: [requireScope("admin")] as const,
      request: {
        params: ModeKey,
        query: OwnerQuery,
        ...jsonBody(z.record(z.string(), z.unknown()), "The fields to change, as PUT takes them."),
      },
      responses: { 200: modeAnswer("The mode was changed."), ...errors(400, 401, 403, 404, 413) },
    }),
    async (c) => {
      const { key } = c.req.valid("param");
      const seen = await new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getMode(key);
      const owner = writeOwner(c.get("principal"), "mode", key, seen, c.req.valid("query").owner);
      const row = await ownedModeStatement(c.get("db"), owner, key).first<Record<string, unknown>>();
      if (!row) throw new ApiError("mode_not_found", `Mode ${quoted(key)} not found.`);
      const existing = parseModeRow(row);
      const body = withGuardrails(
        parseWith(ModeBody, { ...upsertFields(existing), ...c.req.valid("json") }, "request body"),
      );
      const mode = await writeMode(c, { owner, key, body, existing, action: "mode.patch" });
      return c.json({ mode }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/modes",
      tags: ["admin"],
      summary:
        "The modes your organization may manage: the deployment's (each shown or hidden in your organization) and its own",
      security: BEARER,
      middleware: [requireScope("admin")] as const,
      responses: { 200: json(z.object({ modes: z.array(ManagedMode) }), "The modes."), ...errors(401, 403) },
    }),
    async (c) => {
      const { org } = c.get("principal");
      const [deployment, view, hidden] = await Promise.all([
        new D1AgentModeCatalogService(c.get("db"), null).getAllModes(),
        new D1AgentModeCatalogService(c.get("db"), org).getAllModes(),
        hiddenModes(c.get("db"), org),
      ]);
      const own = view.filter((mode) => mode.org !== null);
      const modes = [
        ...deployment.map((mode) => ({ ...mode, enabled: !hidden.has(mode.key) })),
        ...own.map((mode) => ({ ...mode, enabled: true })),
      ];
      return c.json({ modes }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/tools",
      tags: ["admin"],
      summary:
        "The tools a mode may list: every registered tool (those offered in every mode marked), and `mcp:<server>` for each MCP server your organization may use",
      security: BEARER,
      middleware: [requireScope("admin")] as const,
      responses: { 200: json(ModeTools, "The tools."), ...errors(401, 403) },
    }),
    async (c) => {
      const servers = await serversSeenBy(c.get("db"), c.get("principal").org);
      const tools = [
        ...PRODUCTION_TOOL_NAMES.map((name) => ({ name, alwaysOffered: ALWAYS_OFFERED_TOOLS.includes(name) })),
        ...servers.map((server) => ({ name: `mcp:${server.name}`, alwaysOffered: false })),
      ];
      return c.json({ tools }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/modes/{key}",
      tags: ["admin"],
      summary:
        "Removes a mode that is not the default: your organization's own, or (operators, `?owner=deployment`) the deployment's; sessions in it go on in the default mode",
      security: BEARER,
      middleware: [requireScope("admin")] as const,
      request: { params: ModeKey, query: OwnerQuery },
      responses: { 204: { description: "Removed." }, ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { key } = c.req.valid("param");
      const seen = await new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getMode(key);
      const owner = writeOwner(c.get("principal"), "mode", key, seen, c.req.valid("query").owner);
      const row = await ownedModeStatement(c.get("db"), owner, key).first<Record<string, unknown>>();
      if (!row) throw new ApiError("mode_not_found", `Mode ${quoted(key)} not found.`);
      const existing = parseModeRow(row);
      if (existing.isDefault) {
        throw new ApiError(
          "invalid_request",
          `Mode ${quoted(key)} is the default mode; make another mode the default before you delete it.`,
          { param: "key" },
        );
      }
      await deleteMode(c.get("db"), owner, key, [
        changeRow(c, { org: owner, action: "mode.delete", target: key, before: existing }),
      ]);
      forgetTurnReads(c.env.DB);
      c.get("logger").addCustomEvent("Message", "[admin_modes_delete]", "Mode deleted.", [["mode", key]]);
      return c.body(null, 204);
    },
  );

// PUT /admin/modes/:key: add or change a catalog mode (keys with the `admin` scope). Every rule zod can state
// (the key, known tool names, approvals only for offered tools) is in the schema; the default flag needs D1.

import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import type { Db } from "../db";
import { ApiError } from "../errors";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { McpServerRegistry } from "../mcp/mcp-server-registry";
import { AgentMode, MODE_KEY_PATTERN } from "../modes/agent-mode";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { ModeUpsertBody, upsertMode } from "../modes/mode-upsert";
import { parseMcpReference } from "../modes/tool-references";
import { quoted } from "../quote";
import { DEFAULT_ROUTE, ModelRouteRegistry } from "../routing/model-routes";
import { forgetTurnReads } from "../session/session-model";
import { ALWAYS_OFFERED_TOOLS, PRODUCTION_TOOL_NAMES } from "../tools";

const ModeKey = z.object({
  key: z.string().regex(MODE_KEY_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter"),
});

/** The body, with the rules that name tools: each must be registered, and one that needs approval offered. */
const ModeBody = ModeUpsertBody.superRefine((body, ctx) => {
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

/** Every `mcp:<server>` a mode names must be a registered server (its tools are discovered by the session). */
async function checkMcpReferences(db: Db, tools: string[]): Promise<void> {
  const servers = new Set((await new McpServerRegistry(db).list()).map((s) => s.name));
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

/** The route a mode names must exist: `default`, or one of /admin/model-routes. */
async function checkModelRoute(db: Db, name: string): Promise<void> {
  if (name === DEFAULT_ROUTE || (await new ModelRouteRegistry(db).get(name))) return;
  const known = [DEFAULT_ROUTE, ...(await new ModelRouteRegistry(db).list()).map((r) => r.name)].join(", ");
  throw new ApiError(
    "invalid_request",
    `Invalid 'modelRoute' in the request body: no model route ${quoted(name)}; the routes are: ${known}.`,
    { param: "modelRoute" },
  );
}

const modeAnswer = (description: string) => json(z.object({ mode: AgentMode }), description);

export const adminModeRoutes = routes().openapi(
  createRoute({
    method: "put",
    path: "/admin/modes/{key}",
    tags: ["admin"],
    summary: "Add (201) or change (200) a catalog mode",
    security: BEARER,
    middleware: [requireScope("admin")] as const,
    request: { params: ModeKey, ...jsonBody(ModeBody, "The mode.") },
    responses: {
      200: modeAnswer("The mode was changed."),
      201: modeAnswer("The mode was added."),
      ...errors(400, 401, 403, 413, 500),
    },
  }),
  async (c) => {
    const { key } = c.req.valid("param");
    const body = c.req.valid("json");
    await checkMcpReferences(c.var.db, body.tools);
    await checkModelRoute(c.var.db, body.modelRoute);
    const existing = await new D1AgentModeCatalogService(c.var.db).getMode(key);
    if (existing?.isDefault && !body.isDefault) {
      throw new ApiError(
        "invalid_request",
        `Mode ${quoted(key)} is the default mode; make another mode the default instead of clearing it here.`,
        { param: "isDefault" },
      );
    }
    const mode = await upsertMode(c.var.db, key, body);
    forgetTurnReads(c.env.DB);
    c.var.logger.addCustomEvent("Message", "[admin_modes_put]", existing ? "Mode updated." : "Mode created.", [
      ["mode", key],
    ]);
    return existing ? c.json({ mode }, 200) : c.json({ mode }, 201);
  },
);

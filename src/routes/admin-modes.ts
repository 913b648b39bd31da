// PUT /admin/modes/:key: add or change a catalog mode (keys with the `admin` scope).
import { Hono } from "hono";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppBindings, readJsonBody } from "../http";
import { MODE_KEY_PATTERN } from "../modes/agent-mode";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { ModeUpsertBody, upsertMode } from "../modes/mode-upsert";
import { quoted } from "../quote";
import { ALWAYS_OFFERED_TOOLS, PRODUCTION_TOOL_NAMES } from "../tools";

export const adminModeRoutes = new Hono<AppBindings>().put("/admin/modes/:key", requireScope("admin"), async (c) => {
  const key = c.req.param("key");
  if (!MODE_KEY_PATTERN.test(key)) {
    throw ApiError.badRequest(
      `Invalid mode key ${quoted(key)}: use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter.`,
      "key",
    );
  }
  const body = await readJsonBody(c, ModeUpsertBody);

  body.tools.forEach((name, index) => {
    if (!PRODUCTION_TOOL_NAMES.includes(name)) {
      throw ApiError.badRequest(
        `Unknown tool ${quoted(name)}. Known tools: ${PRODUCTION_TOOL_NAMES.join(", ")}.`,
        `tools.${index}`,
      );
    }
  });
  body.approvalRequiredTools.forEach((name, index) => {
    if (!body.tools.includes(name) && !ALWAYS_OFFERED_TOOLS.includes(name)) {
      throw ApiError.badRequest(
        `${quoted(name)} needs approval but the mode does not offer it; list it in 'tools' first.`,
        `approvalRequiredTools.${index}`,
      );
    }
  });

  const existing = await new D1AgentModeCatalogService(c.env.DB).getMode(key);
  if (existing?.isDefault && !body.isDefault) {
    throw ApiError.badRequest(
      `Mode '${key}' is the default mode; make another mode the default instead of clearing it here.`,
      "isDefault",
    );
  }
  const mode = await upsertMode(c.env.DB, key, body);
  c.var.logger.addCustomEvent("Message", "[admin_modes_put]", existing ? "Mode updated." : "Mode created.", [
    ["mode", key],
  ]);
  return c.json({ mode }, existing ? 200 : 201);
});

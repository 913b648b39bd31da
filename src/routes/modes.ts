// GET /modes: the mode catalog with TUL-010 §3.3's fields, examples included, and the model route each mode's
// turns use.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { BEARER, errors, json, routes } from "../http";
import { AgentModeSummary, toModeSummary } from "../modes/agent-mode";
import { D1AgentModeCatalogService } from "../modes/catalog-service";

export const modeRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/modes",
    tags: ["modes"],
    summary: "The mode catalog, default first (TUL-010 §3.3's fields, and each mode's model route)",
    security: BEARER,
    responses: {
      200: json(z.object({ modes: z.array(AgentModeSummary.extend({ modelRoute: z.string() })) }), "The catalog."),
      ...errors(401, 500),
    },
  }),
  async (c) => {
    const modes = await new D1AgentModeCatalogService(c.var.db).getAllModes(c.req.raw.signal);
    return c.json({ modes: modes.map((mode) => ({ ...toModeSummary(mode, true), modelRoute: mode.modelRoute })) }, 200);
  },
);

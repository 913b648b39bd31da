// GET /modes: the mode catalog with exactly TUL-010 §3.3's fields, examples included.
import { Hono } from "hono";
import type { AppBindings } from "../http";
import { toModeSummary } from "../modes/agent-mode";
import { D1AgentModeCatalogService } from "../modes/catalog-service";

export const modeRoutes = new Hono<AppBindings>().get("/modes", async (c) => {
  const modes = await new D1AgentModeCatalogService(c.env.DB).getAllModes(c.req.raw.signal);
  return c.json({ modes: modes.map((mode) => toModeSummary(mode, true)) });
});

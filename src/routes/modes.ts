// GET /modes: the mode catalog with TUL-010 §3.3's fields, examples included, the model route each mode's
// turns use, and whether that route reads images (a client may refuse an image before it sends it).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { BEARER, errors, json, routes } from "../http";
import { AgentModeSummary, toModeSummary } from "../modes/agent-mode";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { envRouteTable } from "../routing/env-router";
import { acceptsImages } from "../routing/model-routes";

export const modeRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/modes",
    tags: ["modes"],
    summary: "The mode catalog, default first (TUL-010 §3.3's fields, and each mode's model route)",
    security: BEARER,
    responses: {
      200: json(
        z.object({
          modes: z.array(
            AgentModeSummary.extend({
              modelRoute: z.string(),
              /** The mode's route reads images: a user's attached images go to it (else they are refused). */
              acceptsImages: z.boolean(),
            }),
          ),
        }),
        "The catalog.",
      ),
      ...errors(401, 500),
    },
  }),
  async (c) => {
    const [modes, table] = await Promise.all([
      new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getAllModes(c.req.raw.signal),
      envRouteTable(c.env, c.get("principal").org, c.get("logger")),
    ]);
    return c.json(
      {
        modes: modes.map((mode) => {
          const route = table.chain(mode.modelRoute)[0];
          return {
            ...toModeSummary(mode, true),
            modelRoute: mode.modelRoute,
            acceptsImages: route ? acceptsImages(route) : false,
          };
        }),
      },
      200,
    );
  },
);

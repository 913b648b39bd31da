// GET /healthz: the one route that needs no key.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { errors, json, routes } from "../http";

export const healthRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/healthz",
    tags: ["health"],
    security: [],
    summary: "Liveness (no key needed); 500 misconfigured when a var is malformed",
    responses: { 200: json(z.object({ status: z.literal("ok") }), "Alive."), ...errors(500) },
  }),
  (c) => c.json({ status: "ok" as const }, 200),
);

// GET /healthz: the one route that needs no key.
import { Hono } from "hono";
import type { AppBindings } from "../http";

export const healthRoutes = new Hono<AppBindings>().get("/healthz", (c) => c.json({ status: "ok" }));

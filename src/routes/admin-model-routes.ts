// /admin/model-routes: the model routes (admin scope). `default` is listed but made from the LLM_* vars; a
// route's fallbacks must name routes that exist and must not come back to it.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { quoted } from "../quote";
import {
  DEFAULT_ROUTE,
  defaultRoute,
  defaultRouteSource,
  fallbackProblem,
  ModelRoute,
  ModelRouteBody,
  ModelRouteRegistry,
  ROUTE_NAME_PATTERN,
} from "../routing/model-routes";
import { forgetRouteTable } from "../routing/route-table";
import { secretValue } from "../secret-name";
import { settings } from "../settings";

const RouteName = z.object({
  name: z
    .string()
    .regex(ROUTE_NAME_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter"),
});

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };
const routeAnswer = (description: string) => json(z.object({ route: ModelRoute }), description);

function notStored(name: string): never {
  throw new ApiError(
    "invalid_request",
    `The route ${quoted(name)} is made from the vars LLM_BASE_URL, LLM_MODEL, LLM_TOOL_FORMAT and LLM_API_KEY; set those instead.`,
    { param: "name" },
  );
}

export const adminModelRouteRoutes = routes()
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/model-routes/{name}",
      summary: "Add (201) or change (200) a model route; its fallbacks must exist and not come back to it",
      ...admin,
      request: { params: RouteName, ...jsonBody(ModelRouteBody, "The route.") },
      responses: { 200: routeAnswer("Changed."), 201: routeAnswer("Added."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (name === DEFAULT_ROUTE) notStored(name);
      const body = c.req.valid("json");
      const registry = new ModelRouteRegistry(c.var.db);
      const graph = new Map<string, readonly string[]>([[DEFAULT_ROUTE, []]]);
      for (const route of await registry.list()) graph.set(route.name, route.fallbacks);
      const problem = fallbackProblem(name, body.fallbacks, graph);
      if (problem) {
        const param = `fallbacks.${problem.index}`;
        throw new ApiError(
          "invalid_request",
          `Invalid '${param}': ${quoted(body.fallbacks[problem.index] ?? "")} ${problem.message}.`,
          {
            param,
          },
        );
      }
      // A key that is not there fails every call: caught when the route is written, not on its first call.
      if (body.apiKeySecret && secretValue(c.env, body.apiKeySecret) === null) {
        throw new ApiError(
          "invalid_request",
          `Invalid 'apiKeySecret': the Worker has no secret named ${quoted(body.apiKeySecret)}; set it first (wrangler secret put ${body.apiKeySecret}).`,
          { param: "apiKeySecret" },
        );
      }
      const { route, created } = await registry.put(name, body);
      forgetRouteTable(c.env.DB);
      c.var.logger.addCustomEvent(
        "Message",
        "[admin_model_routes_put]",
        created ? "Model route added." : "Model route changed.",
        [["route", name]],
      );
      return created ? c.json({ route }, 201) : c.json({ route }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/model-routes",
      summary: "The model routes: `default` (made from the LLM_* vars) first, then the stored ones",
      ...admin,
      responses: { 200: json(z.object({ routes: z.array(ModelRoute) }), "The routes."), ...errors(401, 403) },
    }),
    async (c) => {
      const stored = await new ModelRouteRegistry(c.var.db).list();
      return c.json({ routes: [defaultRoute(defaultRouteSource(c.env, settings(c.env))), ...stored] }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/model-routes/{name}",
      summary: "One model route",
      ...admin,
      request: { params: RouteName },
      responses: { 200: routeAnswer("The route."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (name === DEFAULT_ROUTE)
        return c.json({ route: defaultRoute(defaultRouteSource(c.env, settings(c.env))) }, 200);
      const route = await new ModelRouteRegistry(c.var.db).get(name);
      if (!route) throw new ApiError("model_route_not_found", `Model route ${quoted(name)} not found.`);
      return c.json({ route }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/model-routes/{name}",
      summary: "Removes a route no other route falls back to",
      ...admin,
      request: { params: RouteName },
      responses: { 204: { description: "Removed." }, ...errors(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (name === DEFAULT_ROUTE) notStored(name);
      const registry = new ModelRouteRegistry(c.var.db);
      const modes = (await new D1AgentModeCatalogService(c.var.db).getAllModes())
        .filter((m) => m.modelRoute === name)
        .map((m) => m.key);
      if (modes.length > 0) {
        throw new ApiError(
          "model_route_in_use",
          `Model route ${quoted(name)} is the route of the modes ${modes.join(", ")}; give them another first.`,
        );
      }
      const users = (await registry.list()).filter((r) => r.fallbacks.includes(name)).map((r) => r.name);
      if (users.length > 0) {
        throw new ApiError(
          "model_route_in_use",
          `Model route ${quoted(name)} is a fallback of the routes ${users.join(", ")}; take it out of them first.`,
        );
      }
      if (!(await registry.delete(name))) {
        throw new ApiError("model_route_not_found", `Model route ${quoted(name)} not found.`);
      }
      forgetRouteTable(c.env.DB);
      return c.body(null, 204);
    },
  );

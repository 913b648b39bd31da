// /admin/model-routes: the model routes an admin's org may use (admin scope): `default` (made from the LLM_* vars),
// the deployment's stored routes (an operator changes them) and the org's own (its admins change them, and its
// people get its own instead of the deployment's of a name). A route's fallbacks must name routes that exist and
// must not come back to it; its key is a Worker secret's name for the deployment's routes, one of the org's own
// secrets for an org's; an org's route goes to an https: upstream. Every change is in the audit log. A write asks the
// upstream for its models and answers warnings (a model it does not list, a key it refuses), never a refusal.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import type { Db } from "../db";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { modesNamingRoute } from "../modes/catalog-service";
import { quoted } from "../quote";
import { ModelRouteRegistry, routesFallingBackTo, routesSeenBy } from "../routing/model-route-store";
import {
  DEFAULT_ROUTE,
  defaultRoute,
  defaultRouteSource,
  fallbackProblem,
  ModelRoute,
  ModelRouteBody,
  ROUTE_NAME_PATTERN,
} from "../routing/model-routes";
import { forgetRouteTable, workerKeys } from "../routing/route-table";
import { RouteWarning, routeWarnings } from "../routing/route-warnings";
import { secretValue } from "../secret-name";
import { secretRedactor } from "../secret-redaction";
import { settings } from "../settings";
import { OrgSecrets, secretBoxOf } from "../tenancy/org-secrets";
import { type Owner, type OwnerChoice, OwnerQuery, writeOwner } from "../tenancy/ownership";
import { credentialInUrlProblem, namedSecret, upstreamUrlProblem } from "../tenancy/upstream-url";
import { changeRow } from "./record-change";

const RouteName = z.object({
  name: z
    .string()
    .regex(ROUTE_NAME_PATTERN, "use 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter"),
});

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };
const routeAnswer = (description: string) => json(z.object({ route: ModelRoute }), description);
const writtenAnswer = (description: string) =>
  json(
    z.object({
      route: ModelRoute,
      warnings: z
        .array(RouteWarning)
        .describe("What the upstream said of the route when asked (it was saved either way); empty when all is well."),
    }),
    description,
  );

function notStored(name: string): never {
  throw new ApiError(
    "invalid_request",
    `The route ${quoted(name)} is made from the vars LLM_BASE_URL, LLM_MODEL, LLM_TOOL_FORMAT and LLM_API_KEY; set those instead.`,
    { param: "name" },
  );
}

/** The route the caller's org uses under `name` (its own, else the deployment's), or null. */
async function seenRoute(c: AppContext, name: string): Promise<ModelRoute | null> {
  return (await routesSeenBy(c.get("db"), c.get("principal").org)).find((r) => r.name === name) ?? null;
}

/** Whose route a write or removal of `name` means (the one the caller sees, unless `asked`); refused when not theirs. */
async function routeOwner(c: AppContext, name: string, asked: OwnerChoice | undefined): Promise<Owner> {
  return writeOwner(c.get("principal"), "model route", name, await seenRoute(c, name), asked);
}

/** The routes a route of `owner` may fall back to: `default`, the deployment's, and (for an org's) the org's own. */
async function fallbackGraph(db: Db, owner: Owner): Promise<Map<string, readonly string[]>> {
  const graph = new Map<string, readonly string[]>([[DEFAULT_ROUTE, []]]);
  const routes = owner === null ? await new ModelRouteRegistry(db, null).list() : await routesSeenBy(db, owner);
  for (const route of routes) if (!graph.has(route.name) || route.org !== null) graph.set(route.name, route.fallbacks);
  return graph;
}

/** The key a route names must be there: a Worker secret for the deployment's route, one of the org's for an org's. */
async function checkKeySecret(c: AppContext, owner: Owner, secret: string | undefined): Promise<void> {
  if (!secret) return;
  if (owner === null) {
    // A key that is not there fails every call: caught when the route is written, not on its first call.
    if (secretValue(c.env, secret) !== null) return;
    throw new ApiError(
      "invalid_request",
      `Invalid 'apiKeySecret': the Worker has no secret named ${quoted(secret)}; set it first (wrangler secret put ${secret}).`,
      { param: "apiKeySecret" },
    );
  }
  if (await new OrgSecrets(c.get("db"), owner).get(secret)) return;
  throw new ApiError(
    "invalid_request",
    `Invalid 'apiKeySecret': your organization has no secret named ${quoted(secret)}; store it first (PUT /admin/secrets/${secret}). An organization's route names its own secrets only.`,
    { param: "apiKeySecret" },
  );
}

/** The value of the org's secret `name` (opened), or null; "" for a route that names none. */
async function orgKey(c: AppContext, org: string, name: string | undefined): Promise<string | null> {
  if (!name) return "";
  const opened = await new OrgSecrets(c.get("db"), org).values(await secretBoxOf(c.env), [name], (secret, error) =>
    c.get("logger").addException("[admin_model_routes_SecretUnopened]", error, [["Secret", secret]]),
  );
  return opened.get(name) ?? null;
}

/** The modes and routes that would lose `route` if it went: the owner's own, and for the deployment's, every org's. */
async function usersOf(db: Db, route: ModelRoute): Promise<{ modes: string[]; routes: string[] }> {
  const owner = route.org ?? "";
  // An org's mode naming a deployment route uses it unless the org has its own route of that name.
  const modes = await modesNamingRoute(db, route.name, owner);
  const routes = await routesFallingBackTo(db, route.name, owner);
  const named = (org: string, name: string) => (org === owner ? name : `${org}/${name}`);
  return {
    modes: modes.map((m) => named(m.org, m.key)),
    routes: routes.map((r) => named(r.org, r.name)),
  };
}

export const adminModelRouteRoutes = routes()
  .openapi(
    createRoute({
      method: "put",
      path: "/admin/model-routes/{name}",
      summary:
        "Add (201) or change (200) a model route: your organization's own, or (operators) the deployment's; its fallbacks must exist and not come back to it",
      ...admin,
      request: { params: RouteName, query: OwnerQuery, ...jsonBody(ModelRouteBody, "The route.") },
      responses: { 200: writtenAnswer("Changed."), 201: writtenAnswer("Added."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (name === DEFAULT_ROUTE) notStored(name);
      const body = c.req.valid("json");
      const owner = await routeOwner(c, name, c.req.valid("query").owner);
      if (body.baseUrl) {
        const problem =
          credentialInUrlProblem(body.baseUrl, namedSecret("apiKeySecret")) ??
          (owner !== null ? upstreamUrlProblem(body.baseUrl, settings(c.env).mcp.allowHttpLoopback) : null);
        if (problem) throw new ApiError("invalid_request", `Invalid 'baseUrl': ${problem}`, { param: "baseUrl" });
      }
      const registry = new ModelRouteRegistry(c.get("db"), owner);
      const problem = fallbackProblem(name, body.fallbacks, await fallbackGraph(c.get("db"), owner));
      if (problem) {
        const param = `fallbacks.${problem.index}`;
        throw new ApiError(
          "invalid_request",
          `Invalid '${param}': ${quoted(body.fallbacks[problem.index] ?? "")} ${problem.message}.`,
          { param },
        );
      }
      await checkKeySecret(c, owner, body.apiKeySecret);
      const before = await registry.get(name);
      const after = { name, org: owner, ...body };
      const audit = changeRow(c, { org: owner, action: "model_route.put", target: name, before, after });
      const { route, created } = await registry.put(name, body, [audit]);
      forgetRouteTable(c.env.DB);
      c.get("logger").addCustomEvent(
        "Message",
        "[admin_model_routes_put]",
        created ? "Model route added." : "Model route changed.",
        [["route", name]],
      );
      const key = owner === null ? workerKeys(c.env).keyOf(route) : await orgKey(c, owner, body.apiKeySecret);
      const warnings = await routeWarnings(route, key, secretRedactor(c.env, key ? [key] : []));
      return created ? c.json({ route, warnings }, 201) : c.json({ route, warnings }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/model-routes",
      summary:
        "The model routes your organization may use: `default` (made from the LLM_* vars) first, then the stored ones (the deployment's and your organization's own)",
      ...admin,
      responses: { 200: json(z.object({ routes: z.array(ModelRoute) }), "The routes."), ...errors(401, 403) },
    }),
    async (c) => {
      const stored = await routesSeenBy(c.get("db"), c.get("principal").org);
      return c.json({ routes: [defaultRoute(defaultRouteSource(c.env, settings(c.env))), ...stored] }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/model-routes/{name}",
      summary: "One model route your organization may use (its own of that name, else the deployment's)",
      ...admin,
      request: { params: RouteName },
      responses: { 200: routeAnswer("The route."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (name === DEFAULT_ROUTE)
        return c.json({ route: defaultRoute(defaultRouteSource(c.env, settings(c.env))) }, 200);
      const route = await seenRoute(c, name);
      if (!route) throw new ApiError("model_route_not_found", `Model route ${quoted(name)} not found.`);
      return c.json({ route }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/model-routes/{name}",
      summary: "Removes a route no mode or other route uses (your organization's own, or an operator the deployment's)",
      ...admin,
      request: { params: RouteName, query: OwnerQuery },
      responses: { 204: { description: "Removed." }, ...errors(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (name === DEFAULT_ROUTE) notStored(name);
      const owner = await routeOwner(c, name, c.req.valid("query").owner);
      const registry = new ModelRouteRegistry(c.get("db"), owner);
      const route = await registry.get(name);
      if (!route) throw new ApiError("model_route_not_found", `Model route ${quoted(name)} not found.`);
      const users = await usersOf(c.get("db"), route);
      if (users.modes.length > 0) {
        throw new ApiError(
          "model_route_in_use",
          `Model route ${quoted(name)} is the route of the modes ${users.modes.join(", ")}; give them another first.`,
        );
      }
      if (users.routes.length > 0) {
        throw new ApiError(
          "model_route_in_use",
          `Model route ${quoted(name)} is a fallback of the routes ${users.routes.join(", ")}; take it out of them first.`,
        );
      }
      await registry.delete(name, [
        changeRow(c, { org: owner, action: "model_route.delete", target: name, before: route }),
      ]);
      forgetRouteTable(c.env.DB);
      return c.body(null, 204);
    },
  );

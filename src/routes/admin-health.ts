// GET /admin/health (admin scope; issue 41): a live check of every model route the caller's org may use (`default`
// first, then the stored ones, an org's own where it has one of a name), or (operators, `owner=deployment`) the
// deployment's alone: the upstream answers, the key is accepted, the model exists, tools are accepted; each failure
// in the upstream's words, after redaction (src/routing/route-health.ts). `npm run doctor` and the admin page read it.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
import { defaultRouteSource } from "../routing/model-routes";
import { checkRoute, RouteHealth } from "../routing/route-health";
import { loadRouteTable } from "../routing/route-table";
import { UPSTREAM_CHECK_TIMEOUT_MS } from "../routing/upstream-models";
import { secretRedactor } from "../secret-redaction";
import { settings } from "../settings";
import { isOperator } from "../tenancy/roles";

const MAX_CHECK_TIMEOUT_MS = 30_000;

const HealthQuery = z.object({
  timeoutMs: z.coerce
    .number()
    .int()
    .min(100)
    .max(MAX_CHECK_TIMEOUT_MS)
    .default(UPSTREAM_CHECK_TIMEOUT_MS)
    .describe(
      `How long each request of a check waits for the upstream (100 to ${MAX_CHECK_TIMEOUT_MS} ms, ${UPSTREAM_CHECK_TIMEOUT_MS} by default).`,
    ),
  owner: z
    .literal("deployment", { error: "must be 'deployment' (your organization's view: leave it out)" })
    .optional()
    .describe("Operators: `deployment`, the deployment's routes alone (every org's view starts from them)."),
});

/**
 * A Worker has at most six connections open at once (more wait for one, their timeouts running): the routes are
 * checked a few at a time, in order.
 */
const CHECKS_AT_ONCE = 4;

async function inTurns<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await run(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CHECKS_AT_ONCE, items.length) }, worker));
  return out;
}

export const adminHealthRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/admin/health",
    summary:
      "A live check of every model route your organization may use: the upstream answers, the key is accepted, the model exists, tools are accepted (each failure in the upstream's words)",
    security: BEARER,
    middleware: [requireScope("admin")] as const,
    tags: ["admin"],
    request: { query: HealthQuery },
    responses: {
      200: json(z.object({ ok: z.boolean(), routes: z.array(RouteHealth) }), "Each route's checks; `ok`: all passed."),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const principal = c.get("principal");
    const { owner, timeoutMs } = c.req.valid("query");
    const deployment = owner === "deployment";
    if (deployment && !isOperator(principal)) {
      throw new ApiError("insufficient_scope", "Only an operator checks the deployment's routes alone.", {
        param: "owner",
      });
    }
    // Read now, not from the isolate's copy: a check right after a change must check the change.
    const table = await loadRouteTable(
      c.env,
      deployment ? null : principal.org,
      defaultRouteSource(c.env, settings(c.env)),
      { ttlMs: 0, logger: c.get("logger") },
    );
    const all = [table.fallback, ...table.stored()];
    const redact = secretRedactor(c.env, table.keysOf(all));
    const checked = await inTurns(all, (route) =>
      checkRoute(route, { env: c.env, key: table.keyOf(route), redact, timeoutMs }),
    );
    return c.json({ ok: checked.every((r) => r.ok), routes: checked }, 200);
  },
);

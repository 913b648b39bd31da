// GET and DELETE /admin/bench/ops: npm run bench:ops reads, and resets, the isolate's counts of billable operations
// (src/observability/op-counts.ts). A route only while the bench-only var APTIX_COUNT_OPS is "1" (the bench sets it
// in its own copy of the config): otherwise it answers as a route that does not exist. The counts are the whole
// deployment's (every org's requests in the isolate), so they are an operator's to read.
import { createRoute } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppBindings, BEARER, errors, json, routes } from "../http";
import { COUNT_OPS_VAR, countingOps, opCounts, resetOpCounts } from "../observability/op-counts";
import { quoted } from "../quote";

/** Without the var the route is not there: 404 as for any unknown path, whoever asks. */
const benchOnly = createMiddleware<AppBindings>(async (c, next) => {
  if (!countingOps(c.env)) throw new ApiError("route_not_found", `No route for ${c.req.method} ${quoted(c.req.path)}.`);
  await next();
});

const bench = {
  security: BEARER,
  middleware: [benchOnly, requireScope("operator")],
  tags: ["admin"],
};

const n = z.number().int().min(0);

export const OpCountsBody = z.object({
  doRequests: n.describe("Requests to Durable Objects: a stub's fetch or RPC method call."),
  doRequestsByBinding: z.record(z.string(), n).describe("The same, by the namespace binding (AGENT_SESSION, ...)."),
  d1Queries: n.describe("Statements D1 ran (each of a batch's)."),
  d1RoundTrips: n.describe("Round trips to D1: a single statement, or a whole batch."),
  d1Batches: n,
  d1WriteRoundTrips: n.describe("Round trips that changed the database."),
  d1RowsRead: n.describe("Rows read, as D1's `meta` reports them."),
  d1RowsWritten: n.describe("Rows written, as D1's `meta` reports them."),
  d1ByStatement: z
    .record(z.string(), z.object({ queries: n, rowsRead: n, rowsWritten: n }))
    .describe("The queries and rows by statement (the start of its SQL)."),
  kvReads: n,
  kvWrites: n,
  kvLists: n,
  rateLimiterCalls: n,
  queueMessages: n,
});

const description = `Bench only (404 unless the var ${COUNT_OPS_VAR} is "1"; operator).`;

export const adminBenchOpsRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/bench/ops",
      summary: "The isolate's counts of billable operations since they were last reset (npm run bench:ops)",
      description,
      ...bench,
      responses: {
        200: json(z.object({ counts: OpCountsBody }), "The counts."),
        ...errors(401, 403, 404),
      },
    }),
    (c) => c.json({ counts: opCounts() }, 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/bench/ops",
      summary: "Resets the isolate's counts of billable operations (npm run bench:ops)",
      description,
      ...bench,
      responses: { 204: { description: "Reset." }, ...errors(401, 403, 404) },
    }),
    (c) => {
      resetOpCounts();
      return c.body(null, 204);
    },
  );

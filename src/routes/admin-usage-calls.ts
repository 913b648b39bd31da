// /admin/usage/calls (admin scope): the newest model calls of the admin's org, one meter row each (who, where, what
// it used, how long it took, how it ended); an agent turn's call names its session and turn, which the admin page
// links to the turn's timeline in the console.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
import { recentCalls } from "../metering/usage-records";
import { usageOrg } from "../tenancy/roles";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

export const MAX_RECENT_CALLS = 200;

const CallsQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_RECENT_CALLS)
    .default(50)
    .describe(`Calls to answer (1 to ${MAX_RECENT_CALLS}, 50 by default).`),
  org: z.string().min(1).max(200).optional().describe("Operators: another org's calls."),
});

const ModelCall = z.object({
  createdAt: z.string(),
  userId: z.string(),
  keyId: z.string(),
  /** The passthrough's path, `agent` for a turn's call, `agent_compaction` for a summary of a conversation. */
  endpoint: z.string(),
  route: z.string(),
  model: z.string(),
  promptTokens: z.number(),
  /** Of `promptTokens`, read from and written to the provider's prompt cache. */
  cachedInputTokens: z.number(),
  cacheWriteInputTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  latencyMs: z.number(),
  outcome: z.enum(["ok", "error", "partial"]),
  costUsd: z.number(),
  /** An agent call's session, mode and turn; null for the passthrough (and the turn for rows from before it). */
  sessionId: z.string().nullable(),
  mode: z.string().nullable(),
  turnId: z.string().nullable(),
});

export const adminUsageCallRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/admin/usage/calls",
    summary: "Your organization's newest model calls, one row each, an agent call with its session and turn",
    ...admin,
    request: { query: CallsQuery },
    responses: {
      200: json(z.object({ calls: z.array(ModelCall) }), "The calls, newest first."),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const { limit, org: asked } = c.req.valid("query");
    const org = usageOrg(c.get("principal"), asked);
    if (org === null) throw new ApiError("insufficient_scope", "Only an operator reads another organization's calls.");
    const calls = await recentCalls(c.get("db"), org, limit);
    return c.json({ calls }, 200);
  },
);

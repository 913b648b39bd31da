// /admin/usage/calls (admin scope): the newest model calls of the admin's org, one meter row each (who, where, what
// it used, how long it took, how it ended); an agent turn's call names its session and turn, which the admin page
// links to the turn's timeline in the console.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { BEARER, errors, json, routes } from "../http";
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

const CallRow = z.object({
  created_at: z.string(),
  user_id: z.string(),
  key_id: z.string(),
  endpoint: z.string(),
  route: z.string(),
  model: z.string(),
  prompt_tokens: z.number(),
  cached_input_tokens: z.number(),
  cache_write_input_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  latency_ms: z.number(),
  outcome: ModelCall.shape.outcome,
  cost_micros: z.number(),
  session_id: z.string().nullable(),
  mode: z.string().nullable(),
  turn_id: z.string().nullable(),
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
    const org = usageOrg(c.var.principal, asked);
    if (org === null) throw new ApiError("insufficient_scope", "Only an operator reads another organization's calls.");
    // The (org, created_at) index reads the newest rows of the org first, whatever the table holds.
    const { results } = await c.var.db
      .prepare(
        `SELECT created_at, user_id, key_id, endpoint, route, model, prompt_tokens, cached_input_tokens,
           cache_write_input_tokens, completion_tokens, total_tokens, latency_ms, outcome, cost_micros, session_id, mode, turn_id
         FROM usage_records WHERE org = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      )
      .bind(org, limit)
      .all();
    const calls = results.map((result) => {
      const r = CallRow.parse(result);
      return {
        createdAt: r.created_at,
        userId: r.user_id,
        keyId: r.key_id,
        endpoint: r.endpoint,
        route: r.route,
        model: r.model,
        promptTokens: r.prompt_tokens,
        cachedInputTokens: r.cached_input_tokens,
        cacheWriteInputTokens: r.cache_write_input_tokens,
        completionTokens: r.completion_tokens,
        totalTokens: r.total_tokens,
        latencyMs: r.latency_ms,
        outcome: r.outcome,
        costUsd: r.cost_micros / 1_000_000,
        sessionId: r.session_id,
        mode: r.mode,
        turnId: r.turn_id,
      };
    });
    return c.json({ calls }, 200);
  },
);

// The meter in an agent session: a reservation in the org's OrgMeter before every model call of a turn (priced
// at the route's prices), settled with what the call used; and a usage row for every upstream call the turn's
// router made, with the session and the mode.
import type { CallUse, TurnMeter } from "../agent/model-call-budget";
import type { AdminLogger } from "../observability/admin-logger";
import { envRouteTable } from "../routing/env-router";
import type { RouteAttempt } from "../routing/route-chain-walker";
import { estimateTokens } from "../token-estimate";
import { amountOf, COMPLETION_ESTIMATE_TOKENS, costMicros, estimateOf, reserveCall } from "./meter";
import { recordUsage } from "./usage-records";

export interface MeteredCaller {
  org: string;
  keyId: string;
  user: string;
}

/** Work that must finish after the reply (a Durable Object's waitUntil). */
type Defer = (work: Promise<unknown>) => void;

/** `owner`: the session object, whose leases and batches are its own. */
export function orgTurnMeter(
  env: Cloudflare.Env,
  caller: MeteredCaller,
  logger: AdminLogger,
  defer: Defer,
  owner: object,
): TurnMeter {
  return {
    async reserve(promptChars, route) {
      const table = await envRouteTable(env, caller.org, logger);
      const head = table.chain(await route)[0] ?? table.fallback;
      const reserved = await reserveCall(
        env.ORG_METER,
        caller,
        estimateOf(promptChars, COMPLETION_ESTIMATE_TOKENS, head),
        logger,
        // A session's calls come one at a time: a lease would only hold budget it does not use.
        { leaseCalls: 1, defer, owner },
      );
      if (!reserved.ok) {
        return {
          ok: false,
          message: reserved.refusal.message,
          retryAfterSeconds: reserved.refusal.retryAfterSeconds ?? 60,
        };
      }
      const settle = (used: CallUse | null) => {
        if (!used) return reserved.reservation.settle(null);
        const prices = table.get(used.route) ?? head;
        const usage = used.usage ?? {
          promptTokens: estimateTokens(promptChars),
          completionTokens: estimateTokens(used.answerChars),
        };
        return reserved.reservation.settle(amountOf(usage, prices));
      };
      return { ok: true, reservation: { settle: (used) => defer(settle(used)) } };
    },
  };
}

/**
 * The session's rows: one per upstream call of a turn (`endpoint` `agent`), or of a compaction of its conversation
 * (`agent_compaction`), whatever its end.
 */
export function turnUsageRecorder(
  env: Cloudflare.Env,
  caller: MeteredCaller,
  session: () => { sessionId: string; mode: string; turnId: string | null },
  logger: AdminLogger,
  defer: Defer,
  owner: object,
  endpoint: "agent" | "agent_compaction" = "agent",
): (attempt: RouteAttempt) => void {
  return (attempt) => {
    const usage = attempt.usage ?? {
      promptTokens: 0,
      completionTokens: estimateTokens(attempt.answerChars),
      totalTokens: estimateTokens(attempt.answerChars),
    };
    const { sessionId, mode, turnId } = session();
    defer(
      recordUsage(
        env.DB,
        {
          org: caller.org,
          keyId: caller.keyId,
          userId: caller.user,
          sessionId,
          mode,
          turnId,
          endpoint,
          route: attempt.route.name,
          model: attempt.route.model,
          ...usage,
          latencyMs: attempt.latencyMs,
          outcome: attempt.outcome,
          costMicros: costMicros(attempt.route, usage),
        },
        owner,
      ).catch((error: unknown) => logger.addException("[AgentSession_Usage]", error)),
    );
  };
}

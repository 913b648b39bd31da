// The one walk of a route chain, for the agent's model router and the passthrough alike: the candidates the
// circuit breaker leaves (the skipped ones logged), each tried in order; a route's own failure counts against its
// circuit and hands the call to the next candidate (logged, and the attempt reported for the meter's rows), an
// answer closes the circuit. What counts as the route's failure is the caller's to say, read through the one
// classifier (src/llm/upstream-error.ts, docs/errors.md#failover); a request's own failure is thrown by the
// caller's attempt and ends the walk with the circuit left alone.
import type { ModelErrorCode } from "../llm/chat-model";
import type { AdminLogger } from "../observability/admin-logger";
import type { TokenUsage } from "../wire/turn";
import type { BreakerOptions, CircuitBreaker } from "./circuit-breaker";
import type { ModelRoute } from "./model-routes";

/** How one upstream call ended, for the meter's rows. */
export type AttemptOutcome = "ok" | "error" | "partial";

/** One upstream call made on the walk, for the meter's rows: its route, its time, how it ended, what it used. */
export interface RouteAttempt {
  route: ModelRoute;
  latencyMs: number;
  /** `partial`: the stream broke after text was shown (the step started again, or failed). */
  outcome: AttemptOutcome;
  usage: TokenUsage | null;
  /** Characters of the answer (text and tool call arguments), for an estimate when no usage was reported. */
  answerChars: number;
}

/** A route's own failure (down, slow, busy, broken, its key refused, its model unknown). */
export interface RouteFailure {
  /** Our cause (upstream-error.ts). */
  code: ModelErrorCode;
  /** What happened, in words for the log (never an upstream's key). */
  detail: string;
  /** Milliseconds the attempt took. */
  latencyMs: number;
  /** Characters of answer the route had sent before it failed (0: it failed before its first byte). */
  answerChars: number;
  /** Nothing may take the call from here (an answer already committed, a second broken stream). */
  final?: boolean;
}

/** How an attempt on a route ended: an answer, or the route's own failure and what the walk gives if it ends there. */
export type AttemptEnd<T> =
  | { answered: T }
  | {
      failed: RouteFailure;
      giveUp: () => T;
      /** Lets go of what the failed attempt holds (an answer's body) when the walk moves past it. */
      letGo?: () => Promise<unknown>;
    };

export interface ChainWalk {
  breaker: CircuitBreaker;
  breakerOptions: BreakerOptions;
  logger: AdminLogger;
  /** Hears each attempt the walk moved past; the attempt that ends the walk is reported by its caller. */
  onAttempt?: (attempt: RouteAttempt) => void;
  /** Told before the call goes from `from` to `to`. */
  onFailover?: (from: ModelRoute, to: ModelRoute, failure: RouteFailure) => void;
}

/** The routes of `chain` to try now and the ones skipped for an open circuit; a skip is logged. */
export function chainCandidates<R extends ModelRoute>(
  chain: readonly R[],
  walk: Pick<ChainWalk, "breaker" | "logger">,
): R[] {
  // Routes whose circuit is open are skipped while another remains; a call is never refused untried.
  const { candidates, skipped } = walk.breaker.candidates(chain);
  if (skipped.length > 0) {
    walk.logger.addCustomEvent("Message", "[ModelRouter_Skipped]", "Routes with an open circuit were skipped.", [
      ["Routes", skipped.map((r) => r.name).join(",")],
    ]);
  }
  return candidates;
}

/**
 * Walks `chain`: `attempt` is tried on each candidate in order until one answers, or a failure ends the walk (the
 * last candidate's, or a final one), which answers its `giveUp`. A throw from `attempt` ends the walk at once.
 */
export async function walkChain<T, R extends ModelRoute = ModelRoute>(
  chain: readonly R[],
  walk: ChainWalk,
  attempt: (route: R, next: R | undefined) => Promise<AttemptEnd<T>>,
): Promise<T> {
  const { breaker, breakerOptions, logger } = walk;
  const candidates = chainCandidates(chain, walk);
  for (const [index, route] of candidates.entries()) {
    const next = candidates[index + 1];
    const end = await attempt(route, next);
    if ("answered" in end) {
      breaker.succeeded(route, logger);
      return end.answered;
    }
    const { failed } = end;
    breaker.failed(route, breakerOptions, logger);
    if (!next || failed.final) return end.giveUp();
    walk.onAttempt?.({
      route,
      latencyMs: failed.latencyMs,
      outcome: failed.answerChars > 0 ? "partial" : "error",
      usage: null,
      answerChars: failed.answerChars,
    });
    logger.addCustomEvent("Warning", "[ModelRouter_Failover]", failed.detail, [
      ["Route", route.name],
      ["Code", failed.code],
      ["Next", next.name],
      ["AfterFirstByte", String(failed.answerChars > 0)],
    ]);
    walk.onFailover?.(route, next, failed);
    await end.letGo?.();
  }
  throw new Error("a route chain is never empty");
}

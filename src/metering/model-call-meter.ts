// The one path that meters a model call, for the agent loop and the passthrough alike: its reservation in the
// org's meter (when budgets are on), settled with what it used (priced at its route's prices), and its usage row
// (one per upstream call, whatever its end). The loop reaches it through orgTurnMeter and turnUsageRecorder (whose rows
// a session keeps in its usage outbox), the passthrough through MeteredRequest (src/passthrough/metered-request.ts).
import type { CallUse, TurnMeter } from "../agent/model-call-budget";
import type { AdminLogger } from "../observability/admin-logger";
import type { Refusal } from "../refusal";
import { envRouteTable } from "../routing/env-router";
import type { ModelRoute } from "../routing/model-routes";
import type { RouteAttempt } from "../routing/route-chain-walker";
import { settings } from "../settings";
import { estimateTokens } from "../token-estimate";
import { publishEvent } from "../webhooks/events";
import type { TokenUsage } from "../wire/turn";
import {
  amountOf,
  COMPLETION_ESTIMATE_TOKENS,
  costMicros,
  estimateOf,
  type Prices,
  type Reservation,
  reserveCall,
  SESSION_LEASE_CALLS,
  type TokenCounts,
} from "./meter";
import type { Amount } from "./org-meter";
import { recordUsage, type UsageOutcome, type UsageRecord } from "./usage-records";

/** Who makes the call: the org whose budget it draws on, the key and the person. */
export interface MeteredCaller {
  org: string;
  keyId: string;
  user: string;
}

/** Where the call was made: an agent session's turn (its mode, its turn) or a passthrough path (all null). */
export interface CallPlace {
  sessionId: string | null;
  mode: string | null;
  turnId: string | null;
  /** The passthrough's path, `agent` for a turn's call, `agent_compaction` for a compaction's. */
  endpoint: string;
  /** The version of the session's mode the call ran with; absent for the passthrough. */
  modeVersion?: number | null;
}

/** Work that must finish after the reply (a request's or a Durable Object's waitUntil). */
type Defer = (work: Promise<unknown>) => void;

/** The context every metered call has: its bindings, its log, its deferred work, and the owner of its batches. */
export interface MeterContext {
  env: Cloudflare.Env;
  logger: AdminLogger;
  defer: Defer;
  /** Whose leases and batches these are: WORKER for the Worker's requests, the object itself in a Durable Object. */
  owner: object;
}

/** Budgets off (METER_BUDGETS): nothing to reserve or settle. */
const UNMETERED: Reservation = { settle: async () => {} };

/**
 * Reserves `estimate` in the caller's org's meter before a call (`leaseCalls`: how many calls like it a lease is
 * asked for); a refusal is `budget_exceeded`, and publishes the `budget.exceeded` webhook event (once per refusal,
 * off the reply's path: the org's endpoints, and the caller's own, hear which limit it was). With budgets off,
 * nothing is reserved.
 */
export async function reserveModelCall(
  context: MeterContext,
  caller: Pick<MeteredCaller, "org" | "keyId"> & { user?: string },
  estimate: Amount,
  leaseCalls: number,
): Promise<{ ok: true; reservation: Reservation } | { ok: false; refusal: Refusal }> {
  const { env, logger, defer, owner } = context;
  if (!settings(env).metering.budgets) return { ok: true, reservation: UNMETERED };
  const reserved = await reserveCall(env.ORG_METER, { org: caller.org, keyId: caller.keyId }, estimate, logger, {
    leaseCalls,
    leaseMs: settings(env).metering.leaseMs,
    owner,
    defer,
  });
  if (!reserved.ok) {
    publishEvent(
      env,
      {
        type: "budget.exceeded",
        org: caller.org,
        user: caller.user ?? null,
        sessionId: null,
        data: { org: caller.org, ...reserved.exceeded },
      },
      defer,
    );
  }
  return reserved;
}

/**
 * What a call used: what its upstream reported, else an estimate from the characters sent (`promptChars`) and
 * answered (`answerChars`; null: no answer, nothing used).
 */
export function usedBy(
  reported: TokenUsage | null,
  promptChars: number,
  answerChars: number | null,
): TokenUsage | null {
  if (reported) return reported;
  if (answerChars === null) return null;
  const promptTokens = estimateTokens(promptChars);
  const completionTokens = estimateTokens(answerChars);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

/** Settles a call's reservation with what it used (null: nothing), priced at its route's prices. */
export function settleModelCall(reservation: Reservation, used: TokenCounts | null, prices: Prices): Promise<void> {
  return reservation.settle(used ? amountOf(used, prices) : null);
}

/** One upstream call, as its usage row says it: its route, the model sent, what it used, its time and its end. */
export interface MeteredCall {
  route: ModelRoute;
  model: string;
  usage: TokenUsage | null;
  latencyMs: number;
  outcome: UsageOutcome;
}

/** The usage row of one upstream call, made by `caller` at `place`, priced at its route's prices. */
export function usageRecordOf(caller: MeteredCaller, place: CallPlace, call: MeteredCall): UsageRecord {
  const usage = call.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  return {
    org: caller.org,
    keyId: caller.keyId,
    userId: caller.user,
    ...place,
    route: call.route.name,
    model: call.model,
    ...usage,
    latencyMs: call.latencyMs,
    outcome: call.outcome,
    costMicros: costMicros(call.route, usage),
  };
}

/** The batch failures already logged: every request of a batch hears its failure, the first one logs it. */
const loggedFailures = new WeakSet<object>();

/** Whether `error` is not logged yet (and is from now on). */
function firstReport(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return true;
  if (loggedFailures.has(error)) return false;
  loggedFailures.add(error);
  return true;
}

/**
 * Writes the call's usage row (batched, off the reply's path); resolves when written, never rejects. A batch that
 * failed is logged once, by the first of its requests to hear it, with how many rows it held.
 */
export function recordModelCall(
  context: MeterContext,
  caller: MeteredCaller,
  place: CallPlace,
  call: MeteredCall,
  failureTag: string,
): Promise<void> {
  return recordUsage(context.env.DB, usageRecordOf(caller, place, call), context.owner).catch((error: unknown) => {
    if (firstReport(error)) context.logger.addException(failureTag, error);
  });
}

/** The loop's budgets: a reservation before every model call of a turn, one call at a time. */
export function orgTurnMeter(context: MeterContext, caller: MeteredCaller): TurnMeter {
  return {
    async reserve(promptChars, route) {
      const table = await envRouteTable(context.env, caller.org, context.logger);
      const head = table.chain(await route)[0] ?? table.fallback;
      // A session's calls come one at a time, but its turns come one after another: a lease for a few calls
      // spares each turn a request to the meter (what it leaves unspent goes back at the lease's end).
      const reserved = await reserveModelCall(
        context,
        caller,
        estimateOf(promptChars, COMPLETION_ESTIMATE_TOKENS, head),
        Math.min(settings(context.env).metering.leaseCalls, SESSION_LEASE_CALLS),
      );
      if (!reserved.ok) {
        return {
          ok: false,
          message: reserved.refusal.message,
          retryAfterSeconds: reserved.refusal.retryAfterSeconds ?? 60,
        };
      }
      const settle = (used: CallUse | null) =>
        settleModelCall(
          reserved.reservation,
          used ? (used.usage ?? usedBy(null, promptChars, used.answerChars)) : null,
          used ? (table.get(used.route) ?? head) : head,
        );
      return { ok: true, reservation: { settle: (used) => context.defer(settle(used)) } };
    },
  };
}

/**
 * The session's rows: one per upstream call of a turn (`endpoint` `agent`; `eval` for an eval runner's turn), or of
 * a compaction of its conversation (`agent_compaction`), whatever its end, handed to `keep` (the session's usage
 * outbox, src/session/usage-outbox.ts, which stores it at once and writes it to D1 with the session's list entry). A
 * call without reported usage is counted by its answer alone.
 */
export function turnUsageRecorder(
  keep: (record: UsageRecord) => void,
  caller: MeteredCaller,
  session: () => { sessionId: string; mode: string; turnId: string | null; modeVersion?: number | null },
  endpoint: "agent" | "agent_compaction" | "eval" = "agent",
): (attempt: RouteAttempt) => void {
  return (attempt) => {
    keep(
      usageRecordOf(
        caller,
        { ...session(), endpoint },
        {
          route: attempt.route,
          model: attempt.route.model,
          usage: usedBy(attempt.usage, 0, attempt.answerChars),
          latencyMs: attempt.latencyMs,
          outcome: attempt.outcome,
        },
      ),
    );
  };
}

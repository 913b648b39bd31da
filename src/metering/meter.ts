// The meter's client side: what a model call is expected to cost (the reservation it asks its org's OrgMeter
// for), what it did cost (from the usage the upstream reported and the route's prices), and the reservation's
// settling. One place for the passthrough and the agent loop.
import type { AdminLogger } from "../observability/admin-logger";
import type { Refusal } from "../refusal";
import { refuse } from "../refusal";
import type { Amount } from "./org-meter";

/** Prices of a route, in US dollars per million tokens; null when it has none (its calls cost 0). */
export interface Prices {
  inputPricePerMTok: number | null;
  outputPricePerMTok: number | null;
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
}

/** What a model call's answer may take when its request does not say: for its reservation, never a bill. */
export const COMPLETION_ESTIMATE_TOKENS = 1024;

/** About four characters a token: an estimate for reservations, never a bill. */
export function estimateTokensOfText(chars: number): number {
  return Math.ceil(chars / 4);
}

export function costMicros(prices: Prices, used: TokenCounts): number {
  const input = prices.inputPricePerMTok ?? 0;
  const output = prices.outputPricePerMTok ?? 0;
  // Dollars per million tokens are micro-dollars per token.
  return Math.round(used.promptTokens * input + used.completionTokens * output);
}

/** What a call that sends `promptChars` and may write `completionTokens` is reserved for. */
export function estimateOf(promptChars: number, completionTokens: number, prices: Prices): Amount {
  const counts = { promptTokens: estimateTokensOfText(promptChars), completionTokens };
  return { tokens: counts.promptTokens + counts.completionTokens, costMicros: costMicros(prices, counts) };
}

export function amountOf(used: TokenCounts, prices: Prices): Amount {
  return { tokens: used.promptTokens + used.completionTokens, costMicros: costMicros(prices, used) };
}

/** A reservation in the org's meter, settled once (later calls do nothing). */
export interface Reservation {
  settle(used: Amount | null): Promise<void>;
}

export interface MeterTarget {
  org: string;
  keyId: string;
}

/**
 * Reserves `estimate` for one call of `target` in its org's meter; a refusal is `budget_exceeded`. A meter that
 * cannot be reached lets the call through, logged: the budget is a safeguard, not the service.
 */
export async function reserveCall(
  namespace: DurableObjectNamespace<import("./org-meter").OrgMeter>,
  target: MeterTarget,
  estimate: Amount,
  logger: AdminLogger,
): Promise<{ ok: true; reservation: Reservation } | { ok: false; refusal: Refusal }> {
  const meter = namespace.get(namespace.idFromName(target.org));
  let result: Awaited<ReturnType<typeof meter.reserve>>;
  try {
    result = await meter.reserve(target.keyId, estimate);
  } catch (error) {
    logger.addException("[meter_reserve]", error);
    return { ok: true, reservation: { settle: async () => {} } };
  }
  if (!result.ok) {
    return {
      ok: false,
      refusal: refuse("budget_exceeded", result.message, { retryAfterSeconds: result.retryAfterSeconds }),
    };
  }
  const { reservationId } = result;
  let settled = false;
  return {
    ok: true,
    reservation: {
      settle: async (used) => {
        if (settled) return;
        settled = true;
        try {
          await meter.settle(reservationId, target.keyId, used);
        } catch (error) {
          logger.addException("[meter_settle]", error);
        }
      },
    },
  };
}

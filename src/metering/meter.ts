// The meter's client side: what a model call is expected to cost (the reservation it asks its org's OrgMeter
// for), what it did cost (from the usage the upstream reported and the route's prices), and the reservation's
// settling. One place for the passthrough and the agent loop.
import type { AdminLogger } from "../observability/admin-logger";
import type { Refusal } from "../refusal";
import { refuse } from "../refusal";
import type { Amount, OrgMeter, Settlement } from "./org-meter";

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
 * An isolate's lease: a reservation in its org's meter for several calls, spent from here without asking again
 * while it lasts (LEASE_MS) and holds the next call's estimate. Each call still settles with the meter (after its
 * response, off the client's path), so what was spent is always known there; what the isolate leaves unspent is
 * given back when it gives the lease up. The meter can never be overspent by more than the leases out.
 */
interface Lease {
  id: string;
  remaining: Amount;
  expiresAt: number;
}

/** How long an isolate spends from one lease before it asks for a new one. */
export const LEASE_MS = 2_000;

const leases = new Map<string, Lease>();
/** The lease being asked for, per org and key: concurrent calls wait for it rather than each asking. */
const asking = new Map<string, Promise<unknown>>();

function fits(have: Amount, need: Amount): boolean {
  return have.tokens >= need.tokens && have.costMicros >= need.costMicros;
}

export interface ReserveOptions {
  /** How many calls like this one a lease is asked for (1: a reservation per call). */
  leaseCalls: number;
  /** Work that must finish after the response (a settle, a lease given back). */
  defer: (work: Promise<unknown>) => void;
}

/**
 * Reserves `estimate` for one call of `target`: from this isolate's lease when it holds it, else from a new lease
 * asked of the org's meter. A refusal is `budget_exceeded`. A meter that cannot be reached lets the call through,
 * logged: the budget is a safeguard, not the service.
 */
export async function reserveCall(
  namespace: DurableObjectNamespace<OrgMeter>,
  target: MeterTarget,
  estimate: Amount,
  logger: AdminLogger,
  options: ReserveOptions,
): Promise<{ ok: true; reservation: Reservation } | { ok: false; refusal: Refusal }> {
  const key = `${target.org}\n${target.keyId}`;
  for (;;) {
    const lease = leases.get(key);
    if (lease && lease.expiresAt > Date.now() && fits(lease.remaining, estimate)) {
      lease.remaining = {
        tokens: lease.remaining.tokens - estimate.tokens,
        costMicros: lease.remaining.costMicros - estimate.costMicros,
      };
      return { ok: true, reservation: leaseReservation(namespace, lease, target, estimate, logger, options) };
    }
    if (lease) {
      // Expired here, or too small for this call: what is left goes back, and a new lease is asked for.
      leases.delete(key);
      const left = lease.remaining;
      if (left.tokens > 0 || left.costMicros > 0) {
        // A stub is made per request: one made in another request's context cannot be used from this one.
        const meter = namespace.get(namespace.idFromName(target.org));
        options.defer(
          meter.release(lease.id, left).catch((error: unknown) => logger.addException("[meter_release]", error)),
        );
      }
    }
    const pending = asking.get(key);
    if (pending) {
      await pending;
      continue;
    }
    // The meter must know what the calls that ended here used before it grants more: their settles go first.
    const unsent = settleBatches.get(key);
    if (unsent) {
      unsent.flush();
      await unsent.sent.catch(() => {});
      continue;
    }
    const meter = namespace.get(namespace.idFromName(target.org));
    const want = { tokens: estimate.tokens * options.leaseCalls, costMicros: estimate.costMicros * options.leaseCalls };
    const request = meter.lease(target.keyId, estimate, want);
    const settled = request.then(
      () => undefined,
      () => undefined,
    );
    asking.set(key, settled);
    let result: Awaited<typeof request>;
    try {
      result = await request;
    } catch (error) {
      logger.addException("[meter_reserve]", error);
      return { ok: true, reservation: { settle: async () => {} } };
    } finally {
      if (asking.get(key) === settled) asking.delete(key);
    }
    if (!result.ok) {
      return {
        ok: false,
        refusal: refuse("budget_exceeded", result.message, { retryAfterSeconds: result.retryAfterSeconds }),
      };
    }
    leases.set(key, { id: result.reservationId, remaining: result.granted, expiresAt: Date.now() + LEASE_MS });
  }
}

function leaseReservation(
  namespace: DurableObjectNamespace<OrgMeter>,
  lease: Lease,
  target: MeterTarget,
  estimate: Amount,
  logger: AdminLogger,
  options: ReserveOptions,
): Reservation {
  let settled = false;
  return {
    settle: async (used) => {
      if (settled) return;
      settled = true;
      // A call that used more than its estimate spends the difference from the lease too, so the lease never
      // lets this isolate past what the meter granted.
      if (used) {
        lease.remaining = {
          tokens: lease.remaining.tokens - Math.max(0, used.tokens - estimate.tokens),
          costMicros: lease.remaining.costMicros - Math.max(0, used.costMicros - estimate.costMicros),
        };
      }
      // The lease shrinks at the meter by what it shrank by here: the estimate, or what the call used beyond it.
      const spentFromLease = used
        ? { tokens: Math.max(estimate.tokens, used.tokens), costMicros: Math.max(estimate.costMicros, used.costMicros) }
        : estimate;
      const done = queueSettle(namespace, target, { leaseId: lease.id, used, estimate: spentFromLease }).catch(
        (error: unknown) => logger.addException("[meter_settle]", error),
      );
      options.defer(done);
      await done;
    },
  };
}

/** How long settles wait for company before one call to the org's meter carries them all. */
const SETTLE_WINDOW_MS = 200;

interface SettleBatch {
  items: Settlement[];
  sent: Promise<void>;
  /** Sends the batch now instead of at the end of its window. */
  flush(): void;
}

const settleBatches = new Map<string, SettleBatch>();

/**
 * Queues a call's settle and resolves when the batch holding it reached the meter: one call to the org's object
 * for every settle of a busy isolate in the window, instead of one each. Made with the stub of the request that
 * opens the batch, which waits for it (its waitUntil), so no settle is lost when the isolate goes idle.
 */
function queueSettle(
  namespace: DurableObjectNamespace<OrgMeter>,
  target: MeterTarget,
  item: Omit<Settlement, "keyId">,
): Promise<void> {
  const key = `${target.org}\n${target.keyId}`;
  let batch = settleBatches.get(key);
  if (!batch) {
    const items: Settlement[] = [];
    let flush = () => {};
    const due = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SETTLE_WINDOW_MS);
      flush = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const opened: SettleBatch = {
      items,
      flush: () => flush(),
      sent: due.then(() => {
        if (settleBatches.get(key) === opened) settleBatches.delete(key);
        return namespace.get(namespace.idFromName(target.org)).settleMany(items);
      }),
    };
    batch = opened;
    settleBatches.set(key, batch);
  }
  batch.items.push({ ...item, keyId: target.keyId });
  return batch.sent;
}

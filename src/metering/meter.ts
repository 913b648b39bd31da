// The meter's client side: what a model call is expected to cost (the reservation it asks its org's OrgMeter
// for), what it did cost (from the usage the upstream reported and the route's prices), and the reservation's
// settling, from its holder's lease (meter-account.ts). One place for the passthrough and the agent loop.
import { keptPerIsolate } from "../isolate-cache";
import type { AdminLogger } from "../observability/admin-logger";
import type { Refusal } from "../refusal";
import { refuse } from "../refusal";
import { estimateTokens } from "../token-estimate";
import type { TokenUsage } from "../wire/turn";
import { accountOf, afterSettle, exchange, fits, type Holder, type Lease, UNRESERVED } from "./meter-account";
import type { Amount, BudgetExceeded, OrgMeter, ReserveResult } from "./org-meter";

/**
 * Prices of a route, in US dollars per million tokens; null when it has none (its calls cost 0). Input read from
 * or written to the provider's prompt cache has its own prices when the route gives them, else the input price.
 */
export interface Prices {
  inputPricePerMTok: number | null;
  outputPricePerMTok: number | null;
  cachedInputPricePerMTok?: number | null;
  cacheWritePricePerMTok?: number | null;
}

/** What a call is priced on: its tokens in (of which some read from or written to the cache) and out. */
export type TokenCounts = Pick<
  TokenUsage,
  "promptTokens" | "completionTokens" | "cachedInputTokens" | "cacheWriteInputTokens"
>;

/** What a model call's answer may take when its request does not say: for its reservation, never a bill. */
export const COMPLETION_ESTIMATE_TOKENS = 1024;

export function costMicros(prices: Prices, used: TokenCounts): number {
  const input = prices.inputPricePerMTok ?? 0;
  const output = prices.outputPricePerMTok ?? 0;
  const cachedRead = prices.cachedInputPricePerMTok ?? input;
  const cacheWrite = prices.cacheWritePricePerMTok ?? input;
  // `promptTokens` counts every input token: those read from or written to the cache are priced at their own rate.
  const read = Math.min(used.cachedInputTokens ?? 0, used.promptTokens);
  const written = Math.min(used.cacheWriteInputTokens ?? 0, used.promptTokens - read);
  const fresh = used.promptTokens - read - written;
  // Dollars per million tokens are micro-dollars per token.
  return Math.round(fresh * input + read * cachedRead + written * cacheWrite + used.completionTokens * output);
}

/** What a call that sends `promptChars` and may write `completionTokens` is reserved for. */
export function estimateOf(promptChars: number, completionTokens: number, prices: Prices): Amount {
  const counts = { promptTokens: estimateTokens(promptChars), completionTokens };
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

/** The owner of the Worker's own leases and batches (shared by its requests). */
export const WORKER = {};

/**
 * How many of its calls a session object's lease is asked for (at most METER_LEASE_CALLS): its calls come one at a
 * time, so a lease for an isolate's many requests would hold budget the session does not use; a few spare its next
 * turns a request to the meter.
 */
export const SESSION_LEASE_CALLS = 8;

/** How long a call waits for another call's lease request before it asks itself. */
const ASK_WAIT_MS = 5_000;

/**
 * How long an isolate takes an org and key the meter found without any limit for unbounded: their calls then go
 * without a reservation (no round trip to the meter on the call's path) and only settle, so the meter still
 * counts what they spend. A budget set in another isolate applies here within this time; the isolate that sets
 * it forgets at once (forgetUnbounded).
 */
export const UNBOUNDED_MS = 5_000;

/** Org and key → until when they count as unbounded. Plain numbers, so every request of the isolate may read them. */
const unboundedUntil = new Map<string, number>();

/** How many times each org's budget changed in this isolate: an answer asked for before a change is not believed. */
const budgetChanges = new Map<string, number>();
keptPerIsolate(() => {
  unboundedUntil.clear();
  budgetChanges.clear();
});

/** An org's budget changed: its calls in this isolate ask the meter again. */
export function forgetUnbounded(org: string): void {
  budgetChanges.set(org, (budgetChanges.get(org) ?? 0) + 1);
  for (const key of unboundedUntil.keys()) if (key.startsWith(`${org}\n`)) unboundedUntil.delete(key);
}

export interface ReserveOptions {
  /** How many calls like this one a lease is asked for (1: a reservation per call). */
  leaseCalls: number;
  /** How long a lease is spent from before it is given back or renewed (settings' METER_LEASE_MS). */
  leaseMs: number;
  /** Whose leases and batches these are: WORKER for the Worker's requests, the object itself in a Durable Object. */
  owner: object;
  /** Work that must finish after the response (a settle, a lease given back). */
  defer: (work: Promise<unknown>) => void;
}

/**
 * Reserves `estimate` for one call of `target`: from its holder's lease when that holds it, else from a new lease
 * asked of the org's meter (the same request carries the holder's settles and what it leaves of its old lease).
 * A refusal is `budget_exceeded`. A meter that cannot be reached lets the call through, logged: the budget is a
 * safeguard, not the service.
 */
export async function reserveCall(
  namespace: DurableObjectNamespace<OrgMeter>,
  target: MeterTarget,
  estimate: Amount,
  logger: AdminLogger,
  options: ReserveOptions,
): Promise<{ ok: true; reservation: Reservation } | { ok: false; refusal: Refusal; exceeded: BudgetExceeded }> {
  const key = `${target.org}\n${target.keyId}`;
  const account = accountOf(options.owner, target.org, target.keyId);
  const holder: Holder = {
    namespace,
    org: target.org,
    keyId: target.keyId,
    logger,
    leaseMs: options.leaseMs,
    defer: options.defer,
    owner: options.owner,
    account,
  };
  const waitingSince = Date.now();
  if ((unboundedUntil.get(key) ?? 0) > waitingSince) {
    const unreserved: Lease = { id: UNRESERVED, remaining: estimate, grantedAt: 0, expiresAt: 0, inFlight: 1 };
    return { ok: true, reservation: leaseReservation(isolateHolder(holder), unreserved, estimate) };
  }
  const ask = {
    estimate,
    want: { tokens: estimate.tokens * options.leaseCalls, costMicros: estimate.costMicros * options.leaseCalls },
  };
  for (;;) {
    const lease = account.lease;
    const now = Date.now();
    if (lease && lease.expiresAt > now && fits(lease.remaining, estimate)) {
      lease.remaining = {
        tokens: lease.remaining.tokens - estimate.tokens,
        costMicros: lease.remaining.costMicros - estimate.costMicros,
      };
      lease.inFlight++;
      account.lastUse = now;
      account.lastAsk = ask;
      return { ok: true, reservation: leaseReservation(holder, lease, estimate) };
    }
    // Another call of this holder is asking for the lease: wait for it (a call that vanished is not waited for long).
    if (account.asking && now - waitingSince < ASK_WAIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    // No lease, or one expired here or too small for this call: what is left goes back in the request for a new one.
    const changesBefore = budgetChanges.get(target.org) ?? 0;
    let result: ReserveResult | null;
    try {
      result = await exchange(holder, ask);
    } catch (error) {
      logger.addException("[meter_reserve]", error);
      return { ok: true, reservation: { settle: async () => {} } };
    }
    if (!result) continue;
    if (!result.ok) {
      return {
        ok: false,
        refusal: refuse("budget_exceeded", result.message, { retryAfterSeconds: result.retryAfterSeconds }),
        exceeded: result.exceeded,
      };
    }
    // "No limits" is believed only if no budget of the org was set here while the meter answered.
    if (result.unbounded && (budgetChanges.get(target.org) ?? 0) === changesBefore) {
      unboundedUntil.set(key, Date.now() + UNBOUNDED_MS);
    } else unboundedUntil.delete(key);
  }
}

/**
 * Whose account an unreserved call settles into: the isolate's (WORKER's) for every holder, so the settles of all the
 * sessions of an unbounded org in one isolate reach its meter together, in one request a lease's time, rather than one
 * request per session (issue 46). They hold no lease to share: only settles, which are plain data; the tick that
 * sends them is kept alive by whichever holder's context scheduled it, and one whose context died is replaced by the
 * next settle (schedule, ticking).
 */
function isolateHolder(holder: Holder): Holder {
  if (holder.owner === WORKER) return holder;
  return { ...holder, owner: WORKER, account: accountOf(WORKER, holder.org, holder.keyId) };
}

function leaseReservation(holder: Holder, lease: Lease, estimate: Amount): Reservation {
  let settled = false;
  return {
    settle: async (used) => {
      if (settled) return;
      settled = true;
      // A call that used more than its estimate spends the difference from the lease too, so the lease never
      // lets this holder past what the meter granted.
      if (used) {
        lease.remaining = {
          tokens: lease.remaining.tokens - Math.max(0, used.tokens - estimate.tokens),
          costMicros: lease.remaining.costMicros - Math.max(0, used.costMicros - estimate.costMicros),
        };
      }
      lease.inFlight--;
      // The lease shrinks at the meter by what it shrank by here: the estimate, or what the call used beyond it.
      const spentFromLease = used
        ? { tokens: Math.max(estimate.tokens, used.tokens), costMicros: Math.max(estimate.costMicros, used.costMicros) }
        : estimate;
      holder.account.settles.push({ leaseId: lease.id, keyId: holder.keyId, used, estimate: spentFromLease });
      await afterSettle(holder, lease);
    },
  };
}

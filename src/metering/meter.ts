// The meter's client side: what a model call is expected to cost (the reservation it asks its org's OrgMeter
// for), what it did cost (from the usage the upstream reported and the route's prices), and the reservation's
// settling. One place for the passthrough and the agent loop.
import { keptPerIsolate } from "../isolate-cache";
import type { AdminLogger } from "../observability/admin-logger";
import type { Refusal } from "../refusal";
import { refuse } from "../refusal";
import { estimateTokens } from "../token-estimate";
import type { TokenUsage } from "../wire/turn";
import type { Amount, BudgetExceeded, OrgMeter, Settlement } from "./org-meter";

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

/** The owner of the Worker's own leases and batches (shared by its requests). */
export const WORKER = {};

/** How long a call waits for another call's lease request before it asks itself. */
const ASK_WAIT_MS = 5_000;

/** How long an isolate spends from one lease before it asks for a new one. */
export const LEASE_MS = 2_000;

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

/** A call of an unbounded org and key: nothing reserved, and its settle only counts what it used. */
const UNRESERVED = "";

/** One owner's leases and batches: the Worker's requests share one; each Durable Object has its own. */
interface MeterState {
  leases: Map<string, Lease>;
  /** Org and key whose lease is being asked for: concurrent calls wait for it rather than each asking. */
  asking: Set<string>;
  /** Settles not yet sent, per org and key, and whether a request has a send of them scheduled. */
  settles: Map<string, { items: Settlement[]; scheduled: boolean }>;
}

// Plain data only, kept per owner: a promise made in one request's (or Durable Object's) context cannot be
// awaited or resolved from another's, so every wait below is on the waiting request's own timers and calls.
let states = new WeakMap<object, MeterState>();
keptPerIsolate(() => {
  states = new WeakMap();
});

function stateOf(owner: object): MeterState {
  let state = states.get(owner);
  if (!state) {
    state = { leases: new Map(), asking: new Set(), settles: new Map() };
    states.set(owner, state);
  }
  return state;
}

function fits(have: Amount, need: Amount): boolean {
  return have.tokens >= need.tokens && have.costMicros >= need.costMicros;
}

export interface ReserveOptions {
  /** How many calls like this one a lease is asked for (1: a reservation per call). */
  leaseCalls: number;
  /** Whose leases and batches these are: WORKER for the Worker's requests, the object itself in a Durable Object. */
  owner: object;
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
): Promise<{ ok: true; reservation: Reservation } | { ok: false; refusal: Refusal; exceeded: BudgetExceeded }> {
  const key = `${target.org}\n${target.keyId}`;
  const state = stateOf(options.owner);
  const { leases, asking } = state;
  const waitingSince = Date.now();
  if ((unboundedUntil.get(key) ?? 0) > waitingSince) {
    const unreserved: Lease = { id: UNRESERVED, remaining: estimate, expiresAt: 0 };
    return { ok: true, reservation: leaseReservation(namespace, unreserved, target, estimate, logger, options) };
  }
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
    // Another call of this isolate is asking for the lease: wait for it (a call that vanished is not waited for long).
    if (asking.has(key) && Date.now() - waitingSince < ASK_WAIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    const meter = namespace.get(namespace.idFromName(target.org));
    const want = { tokens: estimate.tokens * options.leaseCalls, costMicros: estimate.costMicros * options.leaseCalls };
    asking.add(key);
    const changesBefore = budgetChanges.get(target.org) ?? 0;
    let result: Awaited<ReturnType<typeof meter.lease>>;
    try {
      // The meter must know what the calls that ended here used before it grants more: their settles go first.
      await sendSettles(meter, state, key);
      result = await meter.lease(target.keyId, estimate, want);
    } catch (error) {
      logger.addException("[meter_reserve]", error);
      return { ok: true, reservation: { settle: async () => {} } };
    } finally {
      asking.delete(key);
    }
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
    const granted: Lease = { id: result.reservationId, remaining: result.granted, expiresAt: Date.now() + LEASE_MS };
    leases.set(key, granted);
    // What the lease leaves unspent goes back when it expires, even if no call of this org and key comes again
    // (a lease of one call's estimate leaves nothing).
    const spare = granted.remaining.tokens > estimate.tokens || granted.remaining.costMicros > estimate.costMicros;
    if (spare)
      options.defer(
        new Promise((resolve) => setTimeout(resolve, LEASE_MS)).then(async () => {
          if (leases.get(key) !== granted) return;
          leases.delete(key);
          if (granted.remaining.tokens <= 0 && granted.remaining.costMicros <= 0) return;
          await namespace
            .get(namespace.idFromName(target.org))
            .release(granted.id, granted.remaining)
            .catch((error: unknown) => logger.addException("[meter_release]", error));
        }),
      );
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
      const state = stateOf(options.owner);
      const key = `${target.org}\n${target.keyId}`;
      const pending = state.settles.get(key) ?? { items: [], scheduled: false };
      state.settles.set(key, pending);
      pending.items.push({ leaseId: lease.id, keyId: target.keyId, used, estimate: spentFromLease });
      if (pending.scheduled) return;
      // This call sends the settles of the next window (its own and those that join it), with its own stub and
      // timer, kept alive by its waitUntil; the others have nothing to wait for.
      pending.scheduled = true;
      const sent = new Promise((resolve) => setTimeout(resolve, SETTLE_WINDOW_MS)).then(() => {
        pending.scheduled = false;
        // A state the isolate no longer keeps (forgetIsolateState) sends nothing: what it held is forgotten.
        if (states.get(options.owner) !== state) return;
        return sendSettles(namespace.get(namespace.idFromName(target.org)), state, key);
      });
      const done = sent.catch((error: unknown) => logger.addException("[meter_settle]", error));
      options.defer(done);
      await done;
    },
  };
}

/** How long settles wait for company before one call to the org's meter carries them all. */
const SETTLE_WINDOW_MS = 200;

/** Sends the settles of `key` not yet sent, in one call; nothing when there are none. */
async function sendSettles(meter: DurableObjectStub<OrgMeter>, state: MeterState, key: string): Promise<void> {
  const pending = state.settles.get(key);
  const items = pending?.items.splice(0) ?? [];
  if (items.length === 0) return;
  try {
    await meter.settleMany(items);
  } catch (error) {
    // Not lost: the next send (the next window, or the next lease request) carries them again.
    pending?.items.unshift(...items);
    throw error;
  }
}

// A holder's account with its org's meter: the lease it spends from, the settles of its calls not yet sent, and the
// one request (OrgMeter.exchange) that carries them with the lease's end and, when the holder is busy, its next
// lease. A holder is the Worker's isolate (its requests share one) or a Durable Object (each has its own). Its
// requests to the meter: one when a call finds no lease that holds it (on that call's path), one when a lease ends
// (its time is up, or it cannot hold another call and none of its calls is in flight): at most one a lease.
import { keptPerIsolate } from "../isolate-cache";
import type { AdminLogger } from "../observability/admin-logger";
import type { Amount, OrgMeter, ReserveResult, Settlement } from "./org-meter";

export interface Lease {
  id: string;
  remaining: Amount;
  grantedAt: number;
  expiresAt: number;
  /** Its calls reserved and not yet settled: a lease ends early only when none is. */
  inFlight: number;
}

/** One holder's dealings with one org's meter for one key. */
export interface Account {
  lease: Lease | null;
  /** Settles not yet sent: they go with the account's next request. */
  settles: Settlement[];
  /** A lease is being asked for: concurrent calls wait for it rather than each asking. */
  asking: boolean;
  /** The tick scheduled (the lease's end, or the settles' send), if any: a later schedule replaces it. */
  tick: { at: number } | null;
  /** When a call last reserved from a lease, and what a lease was asked for then (a renewal ahead asks the same). */
  lastUse: number;
  lastAsk: { estimate: Amount; want: Amount } | null;
}

/** What a request to the meter is made with: all of it from the caller's own context (its stub, timers, defer). */
export interface Holder {
  namespace: DurableObjectNamespace<OrgMeter>;
  org: string;
  keyId: string;
  logger: AdminLogger;
  /** How long a lease is spent from, and how long settles wait at most before they are sent. */
  leaseMs: number;
  /** Keeps the holder's context alive for work after the reply (a request's or a Durable Object's waitUntil). */
  defer: (work: Promise<unknown>) => void;
  owner: object;
  account: Account;
}

/**
 * How long a lease kept for its calls in flight may live: well within the meter's RESERVATION_TTL_MS, so the meter
 * never forgets a lease its holder still spends from.
 */
const LEASE_MAX_AGE_MS = 60_000;

/** A call of an unbounded org and key: nothing reserved, and its settle only counts what it used. */
export const UNRESERVED = "";

/**
 * How many times in a row a holder renews or keeps its lease from one context's ticks (a request's waitUntil lasts
 * 30 s at most): after them the lease is given back, and the holder's next call asks for one from its own context.
 */
const RENEWALS_AHEAD = 8;

// Plain data only, kept per owner: a promise made in one request's (or Durable Object's) context cannot be
// awaited or resolved from another's, so every wait is on the waiting request's own timers and calls.
let accounts = new WeakMap<object, Map<string, Account>>();
keptPerIsolate(() => {
  accounts = new WeakMap();
});

export function accountOf(owner: object, org: string, keyId: string): Account {
  let byKey = accounts.get(owner);
  if (!byKey) {
    byKey = new Map();
    accounts.set(owner, byKey);
  }
  const key = `${org}\n${keyId}`;
  let account = byKey.get(key);
  if (!account) {
    account = { lease: null, settles: [], asking: false, tick: null, lastUse: 0, lastAsk: null };
    byKey.set(key, account);
  }
  return account;
}

/** The isolate still keeps this account (forgetIsolateState drops what it held: that sends nothing). */
function kept(holder: Holder): boolean {
  return accounts.get(holder.owner)?.get(`${holder.org}\n${holder.keyId}`) === holder.account;
}

export function fits(have: Amount, need: Amount): boolean {
  return have.tokens >= need.tokens && have.costMicros >= need.costMicros;
}

/**
 * The account's one request: its settles, what it leaves of its lease (which ends here), and the next lease when
 * `ask` says one. A granted lease's end is scheduled (`depth`: how many leases this context renewed ahead before).
 * Settles a failed request took are sent again with the next one.
 */
export async function exchange(
  holder: Holder,
  ask: { estimate: Amount; want: Amount } | null,
  depth = 0,
): Promise<ReserveResult | null> {
  const { account } = holder;
  const settles = account.settles.splice(0);
  const old = account.lease;
  account.lease = null;
  const left = old
    ? { tokens: Math.max(0, old.remaining.tokens), costMicros: Math.max(0, old.remaining.costMicros) }
    : null;
  const returned = old && left && (left.tokens > 0 || left.costMicros > 0) ? { leaseId: old.id, amount: left } : null;
  if (settles.length === 0 && !returned && !ask) return null;
  if (ask) account.asking = true;
  try {
    // A stub is made per request: one made in another request's context cannot be used from this one.
    const meter = holder.namespace.get(holder.namespace.idFromName(holder.org));
    const result = await meter.exchange({ keyId: holder.keyId, settles, returned, lease: ask });
    if (result?.ok) {
      const now = Date.now();
      const lease = {
        id: result.reservationId,
        remaining: result.granted,
        grantedAt: now,
        expiresAt: now + holder.leaseMs,
        inFlight: 0,
      };
      account.lease = lease;
      schedule(holder, lease.expiresAt, depth);
    }
    return result;
  } catch (error) {
    // The lease given back is not taken again: at worst the meter holds it until it lapses (a refusal too early).
    account.settles.unshift(...settles);
    throw error;
  } finally {
    if (ask) account.asking = false;
  }
}

/**
 * The account's next tick at `at`, replacing the one scheduled; kept alive by the holder's defer. Resolves when
 * the tick has done its work (a settle that scheduled it waits for it). One that should have fired a lease's time
 * ago died with its context, and is replaced too.
 */
export function schedule(holder: Holder, at: number, depth: number): Promise<void> {
  const tick = { at };
  holder.account.tick = tick;
  const done = new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())))
    .then(() => {
      if (holder.account.tick !== tick) return;
      holder.account.tick = null;
      if (!kept(holder)) return;
      return onTick(holder, depth);
    })
    .catch((error: unknown) => holder.logger.addException("[meter_settle]", error));
  holder.defer(done);
  return done;
}

/** A tick is scheduled and alive (it was due less than a lease's time ago). */
export function ticking(holder: Holder): boolean {
  const tick = holder.account.tick;
  return tick !== null && tick.at + holder.leaseMs > Date.now();
}

/**
 * The lease's end (or the settles' send when there is none). A lease with a call still in flight is kept a lease's
 * time more, asking nothing (that call's turn is likely to make another; a lease lives LEASE_MAX_AGE_MS at most).
 * Otherwise a holder that reserved from it in the last half of a lease's time is busy, and renews it ahead (its
 * next call finds a lease and asks nothing); any other gives back what it left. Either way its settles go along.
 */
async function onTick(holder: Holder, depth: number): Promise<void> {
  const { account } = holder;
  if (account.asking) return;
  const lease = account.lease;
  const now = Date.now();
  // Each tick of one context counts towards RENEWALS_AHEAD: the lease's end is then left to the holder's next call.
  const ahead = depth < RENEWALS_AHEAD;
  if (lease && lease.inFlight > 0 && ahead && now - lease.grantedAt < LEASE_MAX_AGE_MS) {
    lease.expiresAt = now + holder.leaseMs;
    void schedule(holder, lease.expiresAt, depth + 1);
    return;
  }
  const busy = lease !== null && account.lastAsk !== null && account.lastUse >= now - holder.leaseMs / 2 && ahead;
  await exchange(holder, busy ? account.lastAsk : null, depth + 1);
}

/**
 * A call's reservation ended (its settle is in `account.settles`): a lease that cannot hold another call like the
 * last, with none of its calls in flight, ends now, its settles with it: renewed at once when it was a lease for
 * several calls (a holder that spent one so is busy), given back when it held one. Otherwise the settles wait for
 * the lease's end, or, without a lease, for a tick a lease's time away. Resolves when what it scheduled is done.
 */
export function afterSettle(holder: Holder, lease: Lease): Promise<unknown> {
  const { account } = holder;
  const ask = account.lastAsk;
  if (account.lease === lease && lease.inFlight === 0 && ask && !fits(lease.remaining, ask.estimate)) {
    if (account.asking) return Promise.resolve();
    const sent = exchange(holder, fits(ask.estimate, ask.want) ? null : ask).catch((error: unknown) =>
      holder.logger.addException("[meter_settle]", error),
    );
    holder.defer(sent);
    return sent;
  }
  if (ticking(holder)) return Promise.resolve();
  return schedule(holder, Date.now() + holder.leaseMs, 0);
}

// OrgMeter: one Durable Object per org, the one counter its budgets are checked against (issue 14). Before a model
// call the caller reserves an estimate; when the call ends it settles the reservation with what the call really
// used (or releases it when the call produced nothing). A reservation counts against every limit it falls under
// (the org's and the key's, per day and per month, tokens and cost) until it is settled, so concurrent calls from
// any number of isolates never spend past the limit: a call whose estimate does not fit what is left (spent +
// in flight) is refused before it starts. A holder (an isolate, or a session object) reserves for several calls at
// once (a lease) and sends its settles, the end of its lease and its next lease in one request (exchange).
// Reservations live in the object's memory (a reservation writes nothing, so its answer is not held back for a
// storage write); what was spent is written at every settle. A reservation nobody settles (a crashed holder)
// lapses after RESERVATION_TTL_MS; if the object itself restarts, the reservations in flight are forgotten, so its
// limits can then be passed by at most what was in flight.
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { countedEnv } from "../observability/op-counts";

/** A lease is granted at most 1/LEASE_SHARE of what a limit leaves, or one call's estimate when that is more. */
export const LEASE_SHARE = 4;

/** How long an unsettled reservation holds its tokens: longer than any model call may take. */
export const RESERVATION_TTL_MS = 15 * 60_000;

export const BudgetLimits = z.strictObject({
  tokensPerDay: z.number().int().min(1).nullable().default(null),
  tokensPerMonth: z.number().int().min(1).nullable().default(null),
  /** US dollars per month, counted from the prices of the routes that served the calls. */
  costPerMonthUsd: z.number().positive().nullable().default(null),
});
export type BudgetLimits = z.output<typeof BudgetLimits>;

export const NO_LIMITS: BudgetLimits = { tokensPerDay: null, tokensPerMonth: null, costPerMonthUsd: null };

/** What a call is expected to use, or did use. Cost in millionths of a dollar (0 for a route without prices). */
export interface Amount {
  tokens: number;
  costMicros: number;
}

export type ReserveResult =
  | {
      ok: true;
      reservationId: string;
      granted: Amount;
      /** No limit applies to the org or the key: a caller may go without asking again for a while (meter.ts). */
      unbounded: boolean;
    }
  | { ok: false; message: string; retryAfterSeconds: number; scope: "org" | "key"; exceeded: BudgetExceeded };

/** Which limit a refused call would pass (the `budget.exceeded` webhook event's data): never an amount of a key's. */
export interface BudgetExceeded {
  scope: "org" | "key";
  kind: "tokens_per_day" | "tokens_per_month" | "cost_per_month_usd";
  /** In the kind's unit: tokens, or US dollars. */
  limit: number;
  period: "day" | "month";
}

/** One call's end, as a batch of them reaches the meter. */
export interface Settlement {
  leaseId: string;
  keyId: string;
  used: Amount | null;
  estimate: Amount;
}

/** What a holder sends in one request: the ends of its calls, the unspent part of the lease it ends, its next lease. */
export interface Exchange {
  keyId: string;
  settles: Settlement[];
  /** The lease the holder stops spending from, and what it leaves unspent (given back). */
  returned: { leaseId: string; amount: Amount } | null;
  /** The lease asked for next: `want`, or as much as the limits leave if that holds `estimate` (one call). */
  lease: { estimate: Amount; want: Amount } | null;
}

/** One subject's budget: its limits, what it spent today and this month, and what is reserved now. */
export interface BudgetUse {
  limits: BudgetLimits;
  day: { period: string; tokens: number; costMicros: number };
  month: { period: string; tokens: number; costMicros: number };
  reserved: Amount;
}

export interface MeterStatus {
  org: BudgetUse;
  keys: Record<string, BudgetUse>;
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS limits (
     subject TEXT PRIMARY KEY, tokens_per_day INTEGER, tokens_per_month INTEGER, cost_per_month_micros INTEGER)`,
  `CREATE TABLE IF NOT EXISTS spend (
     subject TEXT NOT NULL, period TEXT NOT NULL, tokens INTEGER NOT NULL, cost_micros INTEGER NOT NULL,
     PRIMARY KEY (subject, period))`,
];

interface Held extends Amount {
  keyId: string;
  day: string;
  month: string;
  expiresAt: number;
}

/** The org's own budget is subject "org"; a key's is "key:<id>". */
const ORG = "org";
const keySubject = (keyId: string) => `key:${keyId}`;

export function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

export function monthOf(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** Seconds until the UTC day (or month) that `now` is in ends: when a spent budget is whole again. */
function secondsUntil(period: "day" | "month", now: number): number {
  const date = new Date(now);
  const end =
    period === "day"
      ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1)
      : Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((end - now) / 1000));
}

interface Row {
  [key: string]: SqlStorageValue;
}

export class OrgMeter extends DurableObject<Cloudflare.Env> {
  private readonly sql: SqlStorage;
  /** Limits are read on every reservation: kept in memory, written through. */
  private limitsCache: Map<string, BudgetLimits> | null = null;
  /** Spent amounts by `subject|period`, read from storage once each, written through. */
  private readonly spentCache = new Map<string, Amount>();
  /** The reservations in flight, by id. */
  private readonly held = new Map<string, Held>();
  /**
   * How many requests this instance has answered (every RPC a holder or an admin makes): what a turn costs the
   * platform in requests to the org's meter, as the tests of the lease's sizing read it.
   */
  served = 0;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    // npm run bench:ops's counting bindings when it asks for them (src/observability/op-counts.ts), else the env itself.
    super(ctx, countedEnv(env));
    this.sql = ctx.storage.sql;
    for (const statement of SCHEMA) this.sql.exec(statement);
  }

  /** Reserves `estimate` for a call of `keyId`, or refuses it naming the limit it would pass. */
  async reserve(keyId: string, estimate: Amount, now: number = Date.now()): Promise<ReserveResult> {
    return this.lease(keyId, estimate, estimate, now);
  }

  /**
   * A reservation for several calls (a lease an isolate spends from without asking again): `want`, or as much of
   * it as the limits leave, as long as that holds `estimate` (one call); else the refusal naming the limit.
   */
  async lease(keyId: string, estimate: Amount, want: Amount, now: number = Date.now()): Promise<ReserveResult> {
    this.served++;
    return this.grant(keyId, estimate, want, now);
  }

  /**
   * A holder's one request: the settles of its calls first (the meter knows what they used before it grants more),
   * then what it leaves of the lease it ends, then its next lease (null when it asks for none).
   */
  async exchange(request: Exchange, now: number = Date.now()): Promise<ReserveResult | null> {
    this.served++;
    this.settleAll(request.settles, now);
    if (request.returned) this.shrink(request.returned.leaseId, request.returned.amount);
    return request.lease ? this.grant(request.keyId, request.lease.estimate, request.lease.want, now) : null;
  }

  private grant(keyId: string, estimate: Amount, want: Amount, now: number): ReserveResult {
    this.lapse(now);
    const day = dayOf(now);
    const month = monthOf(now);
    const granted = {
      tokens: Math.max(want.tokens, estimate.tokens),
      costMicros: Math.max(want.costMicros, estimate.costMicros),
    };
    let unbounded = true;
    for (const [subject, scope] of [
      [ORG, "org"],
      [keySubject(keyId), "key"],
    ] as const) {
      const limits = this.limitsOf(subject);
      if (!limits.tokensPerDay && !limits.tokensPerMonth && !limits.costPerMonthUsd) continue;
      unbounded = false;
      const use = this.useOf(subject, day, month, scope === "key" ? keyId : null);
      const who = scope === "org" ? "this organization" : "this API key";
      const checks: [number | null, number, "tokens" | "costMicros", string, "day" | "month"][] = [
        [limits.tokensPerDay, use.day.tokens + use.reservedDay.tokens, "tokens", "tokens per day", "day"],
        [limits.tokensPerMonth, use.month.tokens + use.reservedMonth.tokens, "tokens", "tokens per month", "month"],
        [
          limits.costPerMonthUsd === null ? null : Math.round(limits.costPerMonthUsd * 1_000_000),
          use.month.costMicros + use.reservedMonth.costMicros,
          "costMicros",
          "US dollars per month",
          "month",
        ],
      ];
      for (const [limit, used, dimension, unit, period] of checks) {
        if (limit === null) continue;
        const left = limit - used;
        if (left >= estimate[dimension]) {
          // A lease takes at most a share of what is left (one call's estimate when that is more): near its limit a
          // budget goes call by call, not to whichever holder asked first.
          granted[dimension] = Math.min(
            granted[dimension],
            Math.max(estimate[dimension], Math.floor(left / LEASE_SHARE)),
          );
          continue;
        }
        const dollars = unit.startsWith("US");
        const shown = (n: number, digits: number) => (dollars ? (n / 1_000_000).toFixed(digits) : String(n));
        const kind = dollars ? "cost_per_month_usd" : period === "day" ? "tokens_per_day" : "tokens_per_month";
        return {
          ok: false,
          scope,
          exceeded: { scope, kind, limit: dollars ? limit / 1_000_000 : limit, period },
          retryAfterSeconds: secondsUntil(period, now),
          message:
            `The budget of ${who} is spent: ${shown(used, 2)} of ${shown(limit, 2)} ${unit} used or reserved, and this call ` +
            `may need ${shown(estimate[dimension], 4)} more. It renews at the start of the next ${period} (UTC).`,
        };
      }
    }
    const id = crypto.randomUUID();
    this.held.set(id, { keyId, ...granted, day, month, expiresAt: now + RESERVATION_TTL_MS });
    return { ok: true, reservationId: id, granted, unbounded };
  }

  /**
   * Ends a call: what it used is spent (in the day and month it was reserved in; null: nothing, it failed), and
   * its `estimate` leaves the reservation (the whole reservation when absent). A reservation that already lapsed
   * still has the call's use spent.
   */
  async settle(
    reservationId: string,
    keyId: string,
    used: Amount | null,
    estimate?: Amount,
    now: number = Date.now(),
  ): Promise<void> {
    this.settleAll([{ leaseId: reservationId, keyId, used, ...(estimate ? { estimate } : {}) }], now);
  }

  /**
   * Settles calls (as settle() does each), their use added up first: one write a subject and period for them all,
   * not one a call (an exchange carries every settle of its holder's lease, and an isolate's holder those of many
   * sessions).
   */
  private settleAll(
    settles: readonly { leaseId: string; keyId: string; used: Amount | null; estimate?: Amount | undefined }[],
    now: number,
  ): void {
    const added = new Map<string, { subject: string; period: string; amount: Amount }>();
    for (const { leaseId, keyId, used, estimate } of settles) {
      const held = this.held.get(leaseId);
      if (estimate) this.shrink(leaseId, estimate);
      else this.held.delete(leaseId);
      if (!used || (used.tokens === 0 && used.costMicros === 0)) continue;
      const day = held?.day ?? dayOf(now);
      const month = held?.month ?? monthOf(now);
      for (const subject of [ORG, keySubject(keyId)]) {
        for (const period of [`d:${day}`, `m:${month}`]) {
          const key = `${subject}|${period}`;
          const sum = added.get(key) ?? { subject, period, amount: { tokens: 0, costMicros: 0 } };
          sum.amount = { tokens: sum.amount.tokens + used.tokens, costMicros: sum.amount.costMicros + used.costMicros };
          added.set(key, sum);
        }
      }
    }
    for (const [key, { subject, period, amount }] of added) {
      const before = this.spent(subject, period);
      this.spentCache.set(key, {
        tokens: before.tokens + amount.tokens,
        costMicros: before.costMicros + amount.costMicros,
      });
      this.sql.exec(
        `INSERT INTO spend (subject, period, tokens, cost_micros) VALUES (?, ?, ?, ?)
         ON CONFLICT (subject, period) DO UPDATE SET tokens = tokens + excluded.tokens,
           cost_micros = cost_micros + excluded.cost_micros`,
        subject,
        period,
        amount.tokens,
        amount.costMicros,
      );
    }
  }

  /** Sets the org's limits (keyId null) or a key's; all null removes them. */
  async setLimits(keyId: string | null, limits: BudgetLimits): Promise<void> {
    const subject = keyId === null ? ORG : keySubject(keyId);
    this.sql.exec(
      `INSERT INTO limits (subject, tokens_per_day, tokens_per_month, cost_per_month_micros) VALUES (?, ?, ?, ?)
       ON CONFLICT (subject) DO UPDATE SET tokens_per_day = excluded.tokens_per_day,
         tokens_per_month = excluded.tokens_per_month, cost_per_month_micros = excluded.cost_per_month_micros`,
      subject,
      limits.tokensPerDay,
      limits.tokensPerMonth,
      limits.costPerMonthUsd === null ? null : Math.round(limits.costPerMonthUsd * 1_000_000),
    );
    this.limitsCache?.set(subject, limits);
  }

  /** The org's budget use, and that of each of `keyIds`. */
  async status(keyIds: string[] = [], now: number = Date.now()): Promise<MeterStatus> {
    this.lapse(now);
    const day = dayOf(now);
    const month = monthOf(now);
    const keys: Record<string, BudgetUse> = {};
    for (const keyId of keyIds) keys[keyId] = this.budgetUse(keySubject(keyId), day, month, keyId);
    return { org: this.budgetUse(ORG, day, month, null), keys };
  }

  private budgetUse(subject: string, day: string, month: string, keyId: string | null): BudgetUse {
    const use = this.useOf(subject, day, month, keyId);
    return {
      limits: this.limitsOf(subject),
      day: { period: day, ...use.day },
      month: { period: month, ...use.month },
      reserved: use.reservedMonth,
    };
  }

  private limitsOf(subject: string): BudgetLimits {
    if (!this.limitsCache) {
      this.limitsCache = new Map();
      for (const row of this.sql.exec<Row>("SELECT * FROM limits").toArray()) {
        const costMicros = row.cost_per_month_micros;
        this.limitsCache.set(String(row.subject), {
          tokensPerDay: typeof row.tokens_per_day === "number" ? row.tokens_per_day : null,
          tokensPerMonth: typeof row.tokens_per_month === "number" ? row.tokens_per_month : null,
          costPerMonthUsd: typeof costMicros === "number" ? costMicros / 1_000_000 : null,
        });
      }
    }
    return this.limitsCache.get(subject) ?? NO_LIMITS;
  }

  private spent(subject: string, period: string): Amount {
    const cacheKey = `${subject}|${period}`;
    let amount = this.spentCache.get(cacheKey);
    if (!amount) {
      const row = this.sql
        .exec<Row>("SELECT tokens, cost_micros FROM spend WHERE subject = ? AND period = ?", subject, period)
        .toArray()[0];
      amount = { tokens: Number(row?.tokens ?? 0), costMicros: Number(row?.cost_micros ?? 0) };
      this.spentCache.set(cacheKey, amount);
    }
    return amount;
  }

  /** Spent and reserved amounts of a subject (the org: every reservation; a key: its own). */
  private useOf(subject: string, day: string, month: string, keyId: string | null) {
    const reservedDay = { tokens: 0, costMicros: 0 };
    const reservedMonth = { tokens: 0, costMicros: 0 };
    for (const held of this.held.values()) {
      if (keyId !== null && held.keyId !== keyId) continue;
      if (held.day === day) {
        reservedDay.tokens += held.tokens;
        reservedDay.costMicros += held.costMicros;
      }
      if (held.month === month) {
        reservedMonth.tokens += held.tokens;
        reservedMonth.costMicros += held.costMicros;
      }
    }
    return {
      day: this.spent(subject, `d:${day}`),
      month: this.spent(subject, `m:${month}`),
      reservedDay,
      reservedMonth,
    };
  }

  /** Takes `amount` out of a reservation; one with nothing left is gone. */
  private shrink(reservationId: string, amount: Amount): void {
    const held = this.held.get(reservationId);
    if (!held) return;
    held.tokens -= amount.tokens;
    held.costMicros -= amount.costMicros;
    if (held.tokens <= 0 && held.costMicros <= 0) this.held.delete(reservationId);
    else {
      held.tokens = Math.max(0, held.tokens);
      held.costMicros = Math.max(0, held.costMicros);
    }
  }

  private lapse(now: number): void {
    for (const [id, held] of this.held) if (held.expiresAt <= now) this.held.delete(id);
  }
}

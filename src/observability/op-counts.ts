// What a request costs the platform, counted at the bindings: Durable Object requests (by binding), D1 queries with
// the rows D1's `meta` says they read and wrote, KV reads and writes, rate limiter calls and queue messages. It
// exists for `npm run bench:ops` (issue 46), which sets the bench-only var APTIX_COUNT_OPS=1 in its own copy of the
// config: the Worker's entry and each Durable Object's constructor pass their env through countedEnv, which then
// hands out the same bindings wrapped, so every caller is counted without knowing it. Without the var countedEnv
// returns the env itself after one property read, and nothing else here runs.
//
// The counts are the isolate's, not a request's: the bench resets them, runs a warm session's turns, waits for the
// work that runs after the reply, and reads them (GET /admin/bench/ops, src/routes/admin-bench-ops.ts). Under
// `wrangler dev` (and the tests) the Worker and its Durable Objects run in one isolate, so one set of counts sees
// both. Each binding is wrapped once per isolate and the wrapper reused: code that keys what it keeps on a binding
// (src/isolate-cache.ts keys on the D1 binding, which the Worker and its objects share) keeps it as it would
// without the counting, so the counts are those of the code as it runs in production.
import { keptPerIsolate } from "../isolate-cache";

/** The bench-only var that turns the counting on ("1"); unset in wrangler.toml. */
export const COUNT_OPS_VAR = "APTIX_COUNT_OPS";

export interface OpCounts {
  /** Requests to Durable Objects: a stub's fetch or RPC method call (getting a stub or an id is none). */
  doRequests: number;
  /** The same, by the namespace binding's name (AGENT_SESSION, ORG_METER, ...). */
  doRequestsByBinding: Record<string, number>;
  /** Statements D1 ran: one a run/all/first/raw, each of a batch's. */
  d1Queries: number;
  /** Round trips to D1: a single statement, or a whole batch. */
  d1RoundTrips: number;
  /** Of those, the batches. */
  d1Batches: number;
  /** Round trips that changed the database (a write, alone or in a batch). */
  d1WriteRoundTrips: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  /** The same by statement (its SQL's start, spaces collapsed): which queries a request makes. */
  d1ByStatement: Record<string, { queries: number; rowsRead: number; rowsWritten: number }>;
  /** KV get and getWithMetadata, a key each. */
  kvReads: number;
  /** KV put and delete. */
  kvWrites: number;
  /** KV list (priced as a write). */
  kvLists: number;
  /** Rate limiter limit() calls. */
  rateLimiterCalls: number;
  /** Queue messages sent (send, or each of a sendBatch). */
  queueMessages: number;
}

function zero(): OpCounts {
  return {
    doRequests: 0,
    doRequestsByBinding: {},
    d1Queries: 0,
    d1RoundTrips: 0,
    d1Batches: 0,
    d1WriteRoundTrips: 0,
    d1RowsRead: 0,
    d1RowsWritten: 0,
    d1ByStatement: {},
    kvReads: 0,
    kvWrites: 0,
    kvLists: 0,
    rateLimiterCalls: 0,
    queueMessages: 0,
  };
}

let counts = zero();
keptPerIsolate(() => {
  counts = zero();
});

/** The isolate's counts since the last reset (a copy). */
export function opCounts(): OpCounts {
  return structuredClone(counts);
}

export function resetOpCounts(): void {
  counts = zero();
}

/** Whether `env` asks for counting. */
export function countingOps(env: object): boolean {
  return Reflect.get(env, COUNT_OPS_VAR) === "1";
}

/** Each env (the Worker's, each object's) and each binding, wrapped once. */
const wrappedEnvs = new WeakMap<object, object>();
const wrappedBindings = new WeakMap<object, object>();

/**
 * `env` itself, unless it carries APTIX_COUNT_OPS=1: then a copy whose bindings count what is asked of them. Called
 * at the Worker's entry and in each Durable Object's constructor.
 */
export function countedEnv<E extends object>(env: E): E {
  if (Reflect.get(env, COUNT_OPS_VAR) !== "1") return env;
  let wrapped = wrappedEnvs.get(env);
  if (!wrapped) {
    wrapped = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, countedBinding(name, value)]));
    wrappedEnvs.set(env, wrapped);
  }
  return wrapped as E;
}

const isFunction = (value: unknown, name: string) => typeof Reflect.get(value as object, name) === "function";

/** The kind of binding `value` is, by what it offers (a Fetcher answers every name: it is left alone). */
function kindOf(value: unknown): "do" | "d1" | "kv" | "queue" | "limiter" | null {
  if (value === null || typeof value !== "object" || isFunction(value, "fetch")) return null;
  if (isFunction(value, "idFromName") && isFunction(value, "get")) return "do";
  if (isFunction(value, "prepare") && isFunction(value, "batch")) return "d1";
  if (isFunction(value, "getWithMetadata") && isFunction(value, "put")) return "kv";
  if (isFunction(value, "sendBatch")) return "queue";
  if (isFunction(value, "limit")) return "limiter";
  return null;
}

function countedBinding(name: string, value: unknown): unknown {
  const kind = kindOf(value);
  if (!kind) return value;
  const target = value as object;
  let wrapped = wrappedBindings.get(target);
  if (!wrapped) {
    wrapped =
      kind === "do"
        ? countedNamespace(name, target)
        : kind === "d1"
          ? countedD1(target)
          : kind === "kv"
            ? countedKv(target)
            : kind === "queue"
              ? countedQueue(target)
              : countedLimiter(target);
    wrappedBindings.set(target, wrapped);
  }
  return wrapped;
}

type Method = (...args: unknown[]) => unknown;

/** A proxy of `target` whose methods named in `overrides` are replaced; every other member is the target's own. */
function intercept<T extends object>(target: T, overrides: Record<string, (method: Method) => Method>): T {
  return new Proxy(target, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      const method = value.bind(t) as Method;
      const override = typeof prop === "string" ? overrides[prop] : undefined;
      return override ? override(method) : method;
    },
  });
}

function countDo(binding: string): void {
  counts.doRequests++;
  counts.doRequestsByBinding[binding] = (counts.doRequestsByBinding[binding] ?? 0) + 1;
}

/** A stub: every method called on it (fetch, or an RPC method) is a request to the object. */
function countedStub(binding: string, stub: object): object {
  return new Proxy(stub, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      return new Proxy(value, {
        apply(fn, _this, args) {
          countDo(binding);
          return Reflect.apply(fn, t, args);
        },
      });
    },
  });
}

function countedNamespace(binding: string, namespace: object): object {
  const stubOf =
    (method: Method) =>
    (...args: unknown[]) =>
      countedStub(binding, method(...args) as object);
  return intercept(namespace, {
    get: stubOf,
    getByName: stubOf,
    jurisdiction:
      (method) =>
      (...args: unknown[]) =>
        countedNamespace(binding, method(...args) as object),
  });
}

/** The statement a counted one wraps (a batch is sent the originals). */
const statementOf = new WeakMap<object, D1PreparedStatement>();

/** How much of a statement's SQL names it in d1ByStatement. */
const STATEMENT_CHARS = 90;

/** Counts one statement's run: `statement` is the original (its SQL), `result` what D1 answered. */
function countResult(statement: D1PreparedStatement, result: { meta?: Partial<D1Meta> } | undefined): boolean {
  const meta = result?.meta;
  const read = meta?.rows_read ?? 0;
  const written = meta?.rows_written ?? 0;
  counts.d1Queries++;
  counts.d1RowsRead += read;
  counts.d1RowsWritten += written;
  const sql = String(Reflect.get(statement, "statement") ?? "?")
    .replace(/\s+/g, " ")
    .trim();
  const key = sql.slice(0, STATEMENT_CHARS);
  counts.d1ByStatement[key] ??= { queries: 0, rowsRead: 0, rowsWritten: 0 };
  const entry = counts.d1ByStatement[key];
  entry.queries++;
  entry.rowsRead += read;
  entry.rowsWritten += written;
  return meta?.changed_db === true || written > 0;
}

function countRoundTrip(wrote: boolean): void {
  counts.d1RoundTrips++;
  if (wrote) counts.d1WriteRoundTrips++;
}

function countedStatement(statement: D1PreparedStatement): D1PreparedStatement {
  const single =
    (method: Method) =>
    async (...args: unknown[]) => {
      const result = (await method(...args)) as D1Result;
      countRoundTrip(countResult(statement, result));
      return result;
    };
  const counted = intercept(statement, {
    bind:
      (method) =>
      (...args: unknown[]) =>
        countedStatement(method(...args) as D1PreparedStatement),
    run: single,
    all: single,
    // first() is all() keeping the first row (as D1's own first() does, which reports no meta), so its rows count.
    first: () => async (colName?: unknown) => {
      const result = await statement.all();
      countRoundTrip(countResult(statement, result));
      const row = result.results[0] as Record<string, unknown> | undefined;
      if (!row) return null;
      if (typeof colName !== "string") return row;
      if (row[colName] === undefined) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${colName})`);
      return row[colName];
    },
    // raw() reports no meta: the query counts, its rows do not (nothing in aptix calls it).
    raw:
      (method) =>
      async (...args: unknown[]) => {
        const rows = await method(...args);
        countRoundTrip(countResult(statement, undefined));
        return rows;
      },
  });
  statementOf.set(counted, statement);
  return counted;
}

/** A D1 database or one session of it. */
function countedD1<T extends object>(db: T): T {
  return intercept(db, {
    prepare:
      (method) =>
      (...args: unknown[]) =>
        countedStatement(method(...args) as D1PreparedStatement),
    batch:
      (method) =>
      async (statements: unknown, ...rest: unknown[]) => {
        const originals = (statements as D1PreparedStatement[]).map((s) => statementOf.get(s) ?? s);
        const results = (await method(originals, ...rest)) as D1Result[];
        counts.d1Batches++;
        const wrote = results.map((result, i) => countResult(originals[i] as D1PreparedStatement, result));
        countRoundTrip(wrote.some(Boolean));
        return results;
      },
    exec:
      (method) =>
      async (...args: unknown[]) => {
        const result = (await method(...args)) as D1ExecResult;
        counts.d1Queries += result.count;
        countRoundTrip(true);
        return result;
      },
    withSession:
      (method) =>
      (...args: unknown[]) =>
        countedD1(method(...args) as object),
  });
}

function countedKv(kv: object): object {
  const reads =
    (method: Method) =>
    (key: unknown, ...rest: unknown[]) => {
      counts.kvReads += Array.isArray(key) ? key.length : 1;
      return method(key, ...rest);
    };
  const writes = counting(() => counts.kvWrites++);
  return intercept(kv, {
    get: reads,
    getWithMetadata: reads,
    put: writes,
    delete: writes,
    list: counting(() => counts.kvLists++),
  });
}

/** A wrapper of a binding's method that counts each call with `count`, then makes it. */
function counting(count: () => void): (method: Method) => Method {
  return (method) =>
    (...args: unknown[]) => {
      count();
      return method(...args);
    };
}

function countedQueue(queue: object): object {
  return intercept(queue, {
    send: counting(() => counts.queueMessages++),
    sendBatch:
      (method) =>
      (messages: unknown, ...rest: unknown[]) => {
        const list = [...(messages as Iterable<unknown>)];
        counts.queueMessages += list.length;
        return method(list, ...rest);
      },
  });
}

function countedLimiter(limiter: object): object {
  return intercept(limiter, { limit: counting(() => counts.rateLimiterCalls++) });
}

// The meter's rows (usage_records): one per upstream model call, the passthrough's and the agent loop's alike, written
// to D1 off every client's path; read back one a call, or summed by day, key, user, model, mode or route. The one
// module with this table's SQL. The passthrough's rows are batched here per isolate (issue 14); a session's rows are
// kept in its object's storage and ride the D1 batch of its list entry (src/session/usage-outbox.ts, issue 46).
import { z } from "zod";
import type { Db } from "../db";
import { keptPerIsolate } from "../isolate-cache";
import { TokenUsage } from "../wire/turn";

/** How a model call ended: with an answer, without one, or cut short by the client (tokens so far). */
export type UsageOutcome = "ok" | "error" | "partial";

/** One row of the meter: one upstream model call, by whom, where, what it used and how it ended. */
export interface UsageRecord extends TokenUsage {
  org: string;
  keyId: string;
  userId: string;
  /** The session and mode of an agent turn's call; null for the passthrough. */
  sessionId: string | null;
  mode: string | null;
  /** The turn of an agent turn's call (its timeline); null for the passthrough and a compaction between turns. */
  turnId: string | null;
  /** The version of the session's mode the call ran with; null (or absent) for the passthrough. */
  modeVersion?: number | null;
  /** The passthrough's path, or `agent` for a turn's call. */
  endpoint: string;
  /** The model route that served the call. */
  route: string;
  /** The model sent upstream. */
  model: string;
  latencyMs: number;
  outcome: UsageOutcome;
  /** From the route's prices; 0 when it has none. */
  costMicros: number;
}

const OUTCOMES = ["ok", "error", "partial"] as const satisfies readonly UsageOutcome[];

/** A row as it is written: with the id it was given when it was made, so a row written twice is stored once. */
export type UsageRow = UsageRecord & { id: string };

/** A usage row as a session keeps it until D1 has it (parsed on the way back in). */
export const UsageRowSchema = TokenUsage.extend({
  id: z.string(),
  org: z.string(),
  keyId: z.string(),
  userId: z.string(),
  sessionId: z.string().nullable(),
  mode: z.string().nullable(),
  turnId: z.string().nullable(),
  modeVersion: z.number().int().nullable().optional(),
  endpoint: z.string(),
  route: z.string(),
  model: z.string(),
  latencyMs: z.number(),
  outcome: z.enum(OUTCOMES),
  costMicros: z.number(),
}) satisfies z.ZodType<UsageRow>;

/** The row of `record`, its id made now: the id goes with it wherever it waits, and makes its write idempotent. */
export function usageRow(record: UsageRecord): UsageRow {
  return { ...record, id: crypto.randomUUID() };
}

/** How long rows wait for company before one D1 batch writes them all. */
const BATCH_WINDOW_MS = 100;
/** D1 runs a batch as one transaction; past this many rows, write at once. */
const BATCH_MAX_ROWS = 100;

interface Batch {
  rows: UsageRow[];
  written: Promise<void>;
  /** Drops the batch unwritten (the isolate forgets what it kept). */
  discard(): void;
}

// Per owner: the Worker's requests share one batch; a Durable Object that records here has its own (a promise made in
// one object's context cannot be awaited from another's). A session object does not: its rows wait in its usage outbox.
const open = new WeakMap<object, Batch>();
/** The batches whose window has not closed yet, whatever their owner: what forgetIsolateState drops. */
const waiting = new Set<Batch>();
keptPerIsolate(() => {
  for (const batch of [...waiting]) batch.discard();
});

/**
 * Queues a usage row and resolves when the batch holding it is written. One D1 round trip per batch
 * instead of per request: a busy isolate writes tens of rows at once, off every client's path. The
 * request that opens a batch keeps it alive (its waitUntil waits for the write), so no row is lost
 * when the isolate goes idle; the others wait for the same promise in their own waitUntil.
 */
export function recordUsage(db: D1Database, record: UsageRecord, owner: object = db): Promise<void> {
  let batch = open.get(owner);
  if (!batch) batch = openBatch(db, owner);
  batch.rows.push(usageRow(record));
  // A full batch takes no more rows (the next row opens another); it is written at the end of its window by
  // the request that opened it, never flushed from another request's context.
  if (batch.rows.length >= BATCH_MAX_ROWS && open.get(owner) === batch) open.delete(owner);
  return batch.written;
}

function openBatch(db: D1Database, owner: object): Batch {
  const rows: UsageRow[] = [];
  // Plain data only: a batch is discarded from another context (forgetIsolateState), where its promise and timer,
  // made in the context of the request that opened it, may not be touched; its own timer then writes nothing.
  let discarded = false;
  const close = () => {
    // Closed before the write starts: rows queued from now on open the next batch.
    if (open.get(owner) === batch) open.delete(owner);
    waiting.delete(batch);
  };
  const due = new Promise<void>((resolve) => setTimeout(resolve, BATCH_WINDOW_MS)).then(close);
  const batch: Batch = {
    rows,
    written: due.then(() => (discarded ? undefined : writeRows(db, rows))),
    discard: () => {
      discarded = true;
      close();
    },
  };
  open.set(owner, batch);
  waiting.add(batch);
  return batch;
}

const MODEL_NAME_CHARS = 256;

/**
 * How long a failed batch waits before each try again: a D1 that failed a write (overloaded, restarting) usually
 * takes the next; well within a request's 30 s of waitUntil. Each try is the same statement, the same ids: a try whose
 * write D1 made but whose answer was lost stores nothing twice.
 */
const RETRY_AFTER_MS = [1_000, 4_000] as const;

/**
 * A batch D1 did not take at any of its tries: how many rows are not in D1, and D1's own error (which names a
 * constraint or a failure, never a bound value). Every request in the batch hears the same error, reported once.
 */
export class UsageRowsNotWritten extends Error {
  constructor(
    readonly rows: number,
    cause: unknown,
  ) {
    super(
      `${rows} usage ${rows === 1 ? "row" : "rows"} not written: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = "UsageRowsNotWritten";
  }
}

async function writeRows(db: D1Database, rows: UsageRow[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db.batch(usageInserts(db, rows));
      return;
    } catch (error) {
      const wait = RETRY_AFTER_MS[attempt];
      // A row D1's constraints refuse would be refused again: only a failure of D1 itself is worth another try.
      if (wait === undefined || String(error).includes("SQLITE_CONSTRAINT"))
        throw new UsageRowsNotWritten(rows.length, error);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The columns a usage row writes, in the order of `rowValues`. */
const USAGE_COLUMNS = [
  "id",
  "org",
  "key_id",
  "user_id",
  "session_id",
  "mode",
  "turn_id",
  "endpoint",
  "route",
  "model",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "latency_ms",
  "outcome",
  "cost_micros",
  "cached_input_tokens",
  "cache_write_input_tokens",
  "mode_version",
] as const;

/**
 * One statement for any number of rows: they go as one JSON array bound to one parameter, each row an array of its
 * values, and SQLite's json_each spreads them (D1 takes at most 100 bound parameters a statement, five rows' worth
 * the classic way). `WHERE true` lets SQLite read the ON CONFLICT clause as the upsert's, not the join's.
 */
const INSERT_ROWS = `INSERT INTO usage_records (${USAGE_COLUMNS.join(", ")})
  SELECT ${USAGE_COLUMNS.map((_, i) => `value ->> ${i}`).join(", ")}
  FROM json_each(?) WHERE true
  ON CONFLICT (id) DO NOTHING`;

/** A row's values, in USAGE_COLUMNS' order. */
function rowValues(r: UsageRow): (string | number | null)[] {
  return [
    r.id,
    r.org,
    r.keyId,
    r.userId,
    r.sessionId,
    r.mode,
    r.turnId,
    r.endpoint,
    r.route,
    // The model name is the client's own text: kept short, so one odd request cannot fail a whole batch.
    r.model.slice(0, MODEL_NAME_CHARS),
    r.promptTokens,
    r.completionTokens,
    r.totalTokens,
    Math.round(r.latencyMs),
    r.outcome,
    r.costMicros,
    r.cachedInputTokens ?? 0,
    r.cacheWriteInputTokens ?? 0,
    r.modeVersion ?? null,
  ];
}

/**
 * The statement that writes `rows` (none for no rows), for a batch: one statement whatever their number (D1 and its
 * client do per statement what they would otherwise do per row). A row whose id D1 has already (written by a batch
 * whose end its writer did not see) is left as it is, so a row is stored once however often it is sent.
 */
export function usageInserts(db: Db, rows: readonly UsageRow[]): D1PreparedStatement[] {
  if (rows.length === 0) return [];
  return [db.prepare(INSERT_ROWS).bind(JSON.stringify(rows.map(rowValues)))];
}

/** One stored row as the admin reads it: who, where, what it used, how long it took, how it ended, when. */
const StoredCallRow = z
  .object({
    created_at: z.string(),
    user_id: z.string(),
    key_id: z.string(),
    endpoint: z.string(),
    route: z.string(),
    model: z.string(),
    prompt_tokens: z.number(),
    cached_input_tokens: z.number(),
    cache_write_input_tokens: z.number(),
    completion_tokens: z.number(),
    total_tokens: z.number(),
    latency_ms: z.number(),
    outcome: z.enum(OUTCOMES),
    cost_micros: z.number(),
    session_id: z.string().nullable(),
    mode: z.string().nullable(),
    turn_id: z.string().nullable(),
  })
  .transform((r) => ({
    createdAt: r.created_at,
    userId: r.user_id,
    keyId: r.key_id,
    endpoint: r.endpoint,
    route: r.route,
    model: r.model,
    promptTokens: r.prompt_tokens,
    cachedInputTokens: r.cached_input_tokens,
    cacheWriteInputTokens: r.cache_write_input_tokens,
    completionTokens: r.completion_tokens,
    totalTokens: r.total_tokens,
    latencyMs: r.latency_ms,
    outcome: r.outcome,
    costUsd: r.cost_micros / 1_000_000,
    sessionId: r.session_id,
    mode: r.mode,
    turnId: r.turn_id,
  }));
export type StoredCall = z.output<typeof StoredCallRow>;

/** The newest `limit` calls of `org`, newest first. */
export async function recentCalls(db: Db, org: string, limit: number): Promise<StoredCall[]> {
  // The (org, created_at) index reads the newest rows of the org first, whatever the table holds.
  const { results } = await db
    .prepare(
      `SELECT created_at, user_id, key_id, endpoint, route, model, prompt_tokens, cached_input_tokens,
         cache_write_input_tokens, completion_tokens, total_tokens, latency_ms, outcome, cost_micros, session_id, mode, turn_id
       FROM usage_records WHERE org = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    )
    .bind(org, limit)
    .all();
  return results.map((r) => StoredCallRow.parse(r));
}

/** What the rows are summed by. */
export const USAGE_GROUPS = ["day", "key", "user", "model", "mode", "route"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

const GROUP_COLUMN: Record<UsageGroup, string> = {
  day: "substr(created_at, 1, 10)",
  key: "key_id",
  user: "user_id",
  model: "model",
  mode: "COALESCE(mode, '')",
  route: "route",
};

/** One sum of rows: its group (and series), its calls, tokens, cost, ends and mean time. */
export interface UsageSum {
  group: string;
  series: string | null;
  calls: number;
  promptTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  errors: number;
  partial: number;
  latencyMsAvg: number;
}

/** The rows of `org` made in [`from`, `until`) (ISO dates), summed by `group` and, within it, by `series`. */
export async function usageSums(
  db: Db,
  org: string,
  span: { from: string; until: string },
  group: UsageGroup,
  series?: UsageGroup,
): Promise<UsageSum[]> {
  const { results } = await db
    .prepare(
      `SELECT ${GROUP_COLUMN[group]} AS grp, ${series ? GROUP_COLUMN[series] : "NULL"} AS series, COUNT(*) AS calls,
         SUM(prompt_tokens) AS prompt, SUM(cached_input_tokens) AS cached, SUM(cache_write_input_tokens) AS cache_write,
         SUM(completion_tokens) AS completion, SUM(total_tokens) AS total, SUM(cost_micros) AS cost,
         SUM(outcome = 'error') AS errors, SUM(outcome = 'partial') AS partial, AVG(latency_ms) AS latency
       FROM usage_records WHERE org = ? AND created_at >= ? AND created_at < ?
       GROUP BY grp, series ORDER BY grp, series`,
    )
    .bind(org, span.from, span.until)
    .all<Record<string, number | string | null>>();
  return results.map((r) => ({
    group: String(r.grp ?? ""),
    series: r.series === null || r.series === undefined ? null : String(r.series),
    calls: Number(r.calls ?? 0),
    promptTokens: Number(r.prompt ?? 0),
    cachedInputTokens: Number(r.cached ?? 0),
    cacheWriteInputTokens: Number(r.cache_write ?? 0),
    completionTokens: Number(r.completion ?? 0),
    totalTokens: Number(r.total ?? 0),
    costUsd: Number(r.cost ?? 0) / 1_000_000,
    errors: Number(r.errors ?? 0),
    partial: Number(r.partial ?? 0),
    latencyMsAvg: Math.round(Number(r.latency ?? 0)),
  }));
}

// A counter per guardrail, point and action for each org (what fired, never what it matched), shown on the admin
// page (GET /admin/guardrails). Written off the reply's path and coalesced: an isolate's counts of a window
// (GUARDRAIL_COUNT_WINDOW_MS, a second) go to D1 in one batch, the turn and the passthrough handing the write to their
// waitUntil, so a guardrail that fires costs the person no D1 round trip, and a busy isolate one D1 write a second,
// not one a request (a write is billed, and its work shares the isolate with the requests it serves). The one module
// with its SQL.
import { z } from "zod";
import type { Db } from "../db";
import { keptPerIsolate } from "../isolate-cache";
import { type AdminLogger, JsonAdminLogger } from "../observability/admin-logger";
import { settings } from "../settings";
import type { GuardrailDecision } from "./guardrail-check";
import type { GuardrailAction, GuardrailPoint } from "./guardrail-config";

export const GuardrailCount = z
  .object({
    guardrail: z.string(),
    point: z.enum(["input", "output", "tool_call", "tool_result"]),
    action: z.enum(["block", "redact", "mask", "flag"]),
    count: z.number().int(),
    lastAt: z.string(),
  })
  .meta({ id: "GuardrailCount" });
export type GuardrailCount = z.infer<typeof GuardrailCount>;

/** The most counters one batch holds. */
const COUNT_BATCH_MAX = 100;

interface Tally {
  org: string;
  guardrail: string;
  point: GuardrailPoint;
  action: GuardrailAction;
  n: number;
  lastAt: string;
}

interface Batch {
  tallies: Map<string, Tally>;
  /** Resolves when the batch is written (or its write failed, logged): never rejects. */
  written: Promise<void>;
  discard(): void;
}

/** The batch taking counts, per database binding; every batch not yet written (forgetIsolateState drops them). */
const open = new Map<object, Batch>();
const waiting = new Set<Batch>();
keptPerIsolate(() => {
  for (const batch of [...waiting]) batch.discard();
});

function openBatch(db: Db, windowMs: number, logger: AdminLogger): Batch {
  const tallies = new Map<string, Tally>();
  // Plain data only: a batch discarded from another context writes nothing when its own timer fires.
  let discarded = false;
  const close = () => {
    if (open.get(db) === batch) open.delete(db);
    waiting.delete(batch);
  };
  const due = new Promise<void>((resolve) => setTimeout(resolve, windowMs)).then(close);
  const batch: Batch = {
    tallies,
    written: due.then(() => (discarded ? undefined : writeTallies(db, [...tallies.values()], logger))),
    discard: () => {
      discarded = true;
      close();
    },
  };
  open.set(db, batch);
  waiting.add(batch);
  return batch;
}

async function writeTallies(db: Db, tallies: readonly Tally[], logger: AdminLogger): Promise<void> {
  if (tallies.length === 0) return;
  const upsert = db.prepare(
    `INSERT INTO guardrail_counts (org, guardrail, point, action, count, last_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (org, guardrail, point, action) DO UPDATE SET count = count + ?5, last_at = MAX(last_at, ?6)`,
  );
  try {
    await db.batch(tallies.map((t) => upsert.bind(t.org, t.guardrail, t.point, t.action, t.n, t.lastAt)));
  } catch (error) {
    logger.addException("[Guardrail_CountsUnwritten]", error);
  }
}

/**
 * Adds `decisions` to the org's counters; nothing when there are none. The counts of an isolate's requests within
 * GUARDRAIL_COUNT_WINDOW_MS are summed and written in one D1 batch (a busy door writes once a window, not once a request),
 * each request handing the batch's write to its own `waitUntil`, so none is lost when the isolate goes idle.
 */
export function recordGuardrailDecisions(
  env: Cloudflare.Env,
  db: Db,
  org: string,
  decisions: readonly GuardrailDecision[],
  waitUntil: (work: Promise<unknown>) => void,
  logger: AdminLogger = new JsonAdminLogger(),
): void {
  if (decisions.length === 0) return;
  const batch = open.get(db) ?? openBatch(db, settings(env).guardrails.countWindowMs, logger);
  const now = new Date().toISOString();
  for (const d of decisions) {
    const key = `${org}\u0000${d.guardrail}\u0000${d.point}\u0000${d.action}`;
    const seen = batch.tallies.get(key);
    if (seen) {
      seen.n += 1;
      seen.lastAt = now;
    } else {
      batch.tallies.set(key, { org, guardrail: d.guardrail, point: d.point, action: d.action, n: 1, lastAt: now });
    }
  }
  // A full batch takes no more counters: the next decision opens another (written at the end of its own window).
  if (batch.tallies.size >= COUNT_BATCH_MAX && open.get(db) === batch) open.delete(db);
  waitUntil(batch.written);
}

const CountRow = z.object({
  guardrail: z.string(),
  point: z.enum(["input", "output", "tool_call", "tool_result"] satisfies GuardrailPoint[]),
  action: z.enum(["block", "redact", "mask", "flag"] satisfies GuardrailAction[]),
  count: z.number(),
  last_at: z.string(),
});

/** The org's counters, most recent first. */
export async function guardrailCounts(db: Db, org: string): Promise<GuardrailCount[]> {
  const { results } = await db
    .prepare(
      `SELECT guardrail, point, action, count, last_at FROM guardrail_counts WHERE org = ?
       ORDER BY last_at DESC, guardrail, point, action LIMIT 500`,
    )
    .bind(org)
    .all();
  return results.map((row) => {
    const r = CountRow.parse(row);
    return { guardrail: r.guardrail, point: r.point, action: r.action, count: r.count, lastAt: r.last_at };
  });
}

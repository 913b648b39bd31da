// The D1 rows of server-side evals (migration 0036): an org's datasets and its runs. The one module with these
// tables' SQL; every read is by org, so one org never sees another's.
import { z } from "zod";
import type { Db } from "../db.ts";
import { EvalCase } from "./dataset.ts";
import { type EvalResults, EvalResultsSchema } from "./results.ts";

export const EVAL_RUN_STATUSES = ["queued", "running", "completed", "failed"] as const;
export type EvalRunStatus = (typeof EVAL_RUN_STATUSES)[number];

export interface DatasetSummary {
  name: string;
  cases: number;
  createdAt: string;
  createdBy: string;
}

export interface EvalRun {
  id: string;
  mode: string;
  version: number | null;
  compare: number | null;
  dataset: string;
  status: EvalRunStatus;
  /** One per version: the run's version first, the compared one second. */
  results: EvalResults[] | null;
  error: string | null;
  createdAt: string;
  createdBy: string;
  finishedAt: string | null;
}

const RunRow = z
  .object({
    id: z.string(),
    mode: z.string(),
    version: z.number().nullable(),
    compare: z.number().nullable(),
    dataset: z.string(),
    status: z.enum(EVAL_RUN_STATUSES),
    results: z.string().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    created_by: z.string(),
    finished_at: z.string().nullable(),
  })
  .transform(
    (r): EvalRun => ({
      id: r.id,
      mode: r.mode,
      version: r.version,
      compare: r.compare,
      dataset: r.dataset,
      status: r.status,
      results: r.results === null ? null : z.array(EvalResultsSchema).parse(JSON.parse(r.results)),
      error: r.error,
      createdAt: r.created_at,
      createdBy: r.created_by,
      finishedAt: r.finished_at,
    }),
  );

const RUN_COLUMNS = "id, mode, version, compare, dataset, status, results, error, created_at, created_by, finished_at";

export async function putDataset(db: Db, org: string, user: string, name: string, cases: EvalCase[]) {
  const at = new Date().toISOString();
  await db
    .prepare(
      `INSERT INTO eval_datasets (org, name, cases, case_count, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (org, name) DO UPDATE SET cases = excluded.cases, case_count = excluded.case_count,
         created_at = excluded.created_at, created_by = excluded.created_by`,
    )
    .bind(org, name, JSON.stringify(cases), cases.length, at, user)
    .run();
  return { name, cases: cases.length, createdAt: at, createdBy: user } satisfies DatasetSummary;
}

export async function listDatasets(db: Db, org: string): Promise<DatasetSummary[]> {
  const { results } = await db
    .prepare("SELECT name, case_count, created_at, created_by FROM eval_datasets WHERE org = ? ORDER BY name")
    .bind(org)
    .all<{ name: string; case_count: number; created_at: string; created_by: string }>();
  return results.map((r) => ({ name: r.name, cases: r.case_count, createdAt: r.created_at, createdBy: r.created_by }));
}

export async function datasetCases(db: Db, org: string, name: string): Promise<EvalCase[] | null> {
  const row = await db
    .prepare("SELECT cases FROM eval_datasets WHERE org = ? AND name = ?")
    .bind(org, name)
    .first<{ cases: string }>();
  return row ? z.array(EvalCase).parse(JSON.parse(row.cases)) : null;
}

export async function insertRun(
  db: Db,
  run: {
    id: string;
    org: string;
    mode: string;
    version: number | null;
    compare: number | null;
    dataset: string;
    user: string;
  },
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO eval_runs (id, org, mode, version, compare, dataset, status, created_at, created_by)
       VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
    )
    .bind(run.id, run.org, run.mode, run.version, run.compare, run.dataset, new Date().toISOString(), run.user)
    .run();
}

/** The org's runs, newest first. */
export async function listRuns(db: Db, org: string, limit = 50): Promise<EvalRun[]> {
  const { results } = await db
    .prepare(`SELECT ${RUN_COLUMNS} FROM eval_runs WHERE org = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`)
    .bind(org, limit)
    .all();
  return results.map((r) => RunRow.parse(r));
}

export async function getRun(db: Db, org: string, id: string): Promise<EvalRun | null> {
  const row = await db.prepare(`SELECT ${RUN_COLUMNS} FROM eval_runs WHERE org = ? AND id = ?`).bind(org, id).first();
  return row ? RunRow.parse(row) : null;
}

/**
 * Takes a queued run for this consumer: true when it was queued (it is now running), false when another delivery
 * of the same message took it first (queues deliver at least once).
 */
export async function claimRun(db: D1Database, id: string): Promise<{ org: string; createdBy: string } | null> {
  return db
    .prepare("UPDATE eval_runs SET status = 'running' WHERE id = ? AND status = 'queued' RETURNING org, created_by")
    .bind(id)
    .first<{ org: string; created_by: string }>()
    .then((row) => (row ? { org: row.org, createdBy: row.created_by } : null));
}

export async function finishRun(
  db: D1Database,
  id: string,
  outcome: { results: EvalResults[] } | { error: string },
): Promise<void> {
  const done = "results" in outcome;
  await db
    .prepare("UPDATE eval_runs SET status = ?, results = ?, error = ?, finished_at = ? WHERE id = ?")
    .bind(
      done ? "completed" : "failed",
      done ? JSON.stringify(outcome.results) : null,
      done ? null : outcome.error,
      new Date().toISOString(),
      id,
    )
    .run();
}

// The one owner of D1's `schedules` and `schedule_runs` (migrations/0029_schedules.sql): rows read through zod, the
// list a caller sees (their own; an admin's org's), and the record of each run.
import { z } from "zod";
import type { Db } from "../db";
import {
  type LastRun,
  type RunStatus,
  RunStatus as RunStatusSchema,
  type Schedule,
  type ScheduleRun,
} from "../wire/schedule";
import { ScheduleTiming } from "./schedule-timing";

/** A schedule as stored: what it runs, its timing, and who it acts as. */
export interface ScheduleRecord {
  scheduleId: string;
  org: string;
  user: string;
  keyId: string;
  admin: boolean;
  name: string;
  mode: string;
  prompt: string;
  timing: ScheduleTiming;
  sessionId: string | null;
  enabled: boolean;
  nextRunAt: string | null;
  createdAt: string;
  updatedAt: string;
  lastRun: z.infer<typeof LastRun> | null;
  /** The record of the last run (its id), to bring its status up to date. */
  lastRunId: string | null;
}

const RunColumns = {
  run_at: z.string().nullable(),
  run_session_id: z.string().nullable(),
  run_turn_id: z.string().nullable(),
  run_status: RunStatusSchema.nullable(),
  run_reason: z.string().nullable(),
};

const ScheduleRow = z
  .object({
    id: z.string(),
    org: z.string(),
    user_id: z.string(),
    key_id: z.string(),
    admin: z.number(),
    name: z.string(),
    mode: z.string(),
    prompt: z.string(),
    timing: z.string().transform((text) => ScheduleTiming.parse(JSON.parse(text))),
    session_id: z.string().nullable(),
    enabled: z.number(),
    next_run_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    last_run_id: z.string().nullable(),
    ...RunColumns,
  })
  .transform(
    (r): ScheduleRecord => ({
      scheduleId: r.id,
      org: r.org,
      user: r.user_id,
      keyId: r.key_id,
      admin: r.admin === 1,
      name: r.name,
      mode: r.mode,
      prompt: r.prompt,
      timing: r.timing,
      sessionId: r.session_id,
      enabled: r.enabled === 1,
      nextRunAt: r.next_run_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      lastRunId: r.last_run_id,
      lastRun:
        r.run_at === null || r.run_status === null
          ? null
          : {
              at: r.run_at,
              sessionId: r.run_session_id,
              turnId: r.run_turn_id,
              status: r.run_status,
              reason: r.run_reason,
            },
    }),
  );

const SELECT = `SELECT s.*, r.at AS run_at, r.session_id AS run_session_id, r.turn_id AS run_turn_id,
  r.status AS run_status, r.reason AS run_reason
  FROM schedules s LEFT JOIN schedule_runs r ON r.id = s.last_run_id`;

/** A new schedule's id (the name of its ScheduleRunner object too). */
export function newScheduleId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `sch_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The schedule as the API shows it. */
export function scheduleView(record: ScheduleRecord): Schedule {
  const { timing } = record;
  return {
    scheduleId: record.scheduleId,
    name: record.name,
    user: record.user,
    mode: record.mode,
    prompt: record.prompt,
    cron: timing.kind === "cron" ? timing.cron : null,
    at: timing.kind === "at" ? timing.at : null,
    every: timing.kind === "every" ? timing.every : null,
    timezone: timing.timezone,
    sessionId: record.sessionId,
    enabled: record.enabled,
    nextRunAt: record.nextRunAt,
    lastRun: record.lastRun,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export async function findSchedule(db: Db, scheduleId: string): Promise<ScheduleRecord | null> {
  const row = await db.prepare(`${SELECT} WHERE s.id = ?`).bind(scheduleId).first();
  return row ? ScheduleRow.parse(row) : null;
}

/** The schedules a caller sees: an admin's, their org's; a member's, their own. Oldest first. */
export async function listSchedules(
  db: Db,
  caller: { org: string; user: string; admin?: boolean | undefined },
): Promise<ScheduleRecord[]> {
  const statement = caller.admin
    ? db.prepare(`${SELECT} WHERE s.org = ? ORDER BY s.created_at, s.id`).bind(caller.org)
    : db
        .prepare(`${SELECT} WHERE s.org = ? AND s.user_id = ? ORDER BY s.created_at, s.id`)
        .bind(caller.org, caller.user);
  const { results } = await statement.all();
  return results.map((row) => ScheduleRow.parse(row));
}

/** How many schedules the user has, and their org. */
export async function countSchedules(db: Db, org: string, user: string): Promise<{ user: number; org: number }> {
  const row = await db
    .prepare("SELECT COUNT(*) AS org_count, COALESCE(SUM(user_id = ?), 0) AS user_count FROM schedules WHERE org = ?")
    .bind(user, org)
    .first();
  const counts = z.object({ org_count: z.number(), user_count: z.number() }).parse(row);
  return { user: counts.user_count, org: counts.org_count };
}

export type NewSchedule = Omit<ScheduleRecord, "createdAt" | "updatedAt" | "lastRun" | "lastRunId">;

export function insertScheduleStatement(db: Db, record: NewSchedule) {
  return db
    .prepare(
      `INSERT INTO schedules (id, org, user_id, key_id, admin, name, mode, prompt, timing, session_id, enabled, next_run_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      record.scheduleId,
      record.org,
      record.user,
      record.keyId,
      record.admin ? 1 : 0,
      record.name,
      record.mode,
      record.prompt,
      JSON.stringify(record.timing),
      record.sessionId,
      record.enabled ? 1 : 0,
      record.nextRunAt,
    );
}

export async function insertSchedule(db: Db, record: NewSchedule) {
  await insertScheduleStatement(db, record).run();
}

/** Writes a change a person made (name, prompt, mode, timing, enabled) and the next run it leads to. */
export async function updateSchedule(
  db: Db,
  scheduleId: string,
  change: Pick<ScheduleRecord, "name" | "prompt" | "mode" | "timing" | "enabled" | "nextRunAt">,
): Promise<void> {
  await db
    .prepare(
      `UPDATE schedules SET name = ?, prompt = ?, mode = ?, timing = ?, enabled = ?, next_run_at = ?,
         updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?`,
    )
    .bind(
      change.name,
      change.prompt,
      change.mode,
      JSON.stringify(change.timing),
      change.enabled ? 1 : 0,
      change.nextRunAt,
      scheduleId,
    )
    .run();
}

/** The runner's next run, mirrored for the list. */
export async function setNextRun(db: Db, scheduleId: string, nextRunAt: number | null): Promise<void> {
  await db
    .prepare("UPDATE schedules SET next_run_at = ? WHERE id = ?")
    .bind(nextRunAt === null ? null : new Date(nextRunAt).toISOString(), scheduleId)
    .run();
}

export async function deleteSchedule(db: Db, scheduleId: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM schedules WHERE id = ?").bind(scheduleId),
    db.prepare("DELETE FROM schedule_runs WHERE schedule_id = ?").bind(scheduleId),
  ]);
}

/** Records a run and makes it the schedule's last; with `nextRunAt`, mirrors the runner's next run too (one batch). */
export async function recordRun(db: Db, org: string, run: ScheduleRun, nextRunAt?: number | null): Promise<void> {
  const last =
    nextRunAt === undefined
      ? db.prepare("UPDATE schedules SET last_run_id = ? WHERE id = ?").bind(run.runId, run.scheduleId)
      : db
          .prepare("UPDATE schedules SET last_run_id = ?, next_run_at = ? WHERE id = ?")
          .bind(run.runId, nextRunAt === null ? null : new Date(nextRunAt).toISOString(), run.scheduleId);
  await db.batch([
    db
      .prepare(
        `INSERT INTO schedule_runs (id, schedule_id, org, due_at, at, trigger, session_id, turn_id, status, reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        run.runId,
        run.scheduleId,
        org,
        run.dueAt,
        run.at,
        run.trigger,
        run.sessionId,
        run.turnId,
        run.status,
        run.reason,
      ),
    last,
  ]);
}

/** A run's turn has moved on (it was running when recorded): its status now. */
export async function updateRunStatus(db: Db, runId: string, status: RunStatus, reason: string | null): Promise<void> {
  await db.prepare("UPDATE schedule_runs SET status = ?, reason = ? WHERE id = ?").bind(status, reason, runId).run();
}

const RunRow = z
  .object({
    id: z.string(),
    schedule_id: z.string(),
    due_at: z.string(),
    at: z.string(),
    trigger: z.enum(["schedule", "manual"]),
    session_id: z.string().nullable(),
    turn_id: z.string().nullable(),
    status: RunStatusSchema,
    reason: z.string().nullable(),
  })
  .transform(
    (r): ScheduleRun => ({
      runId: r.id,
      scheduleId: r.schedule_id,
      dueAt: r.due_at,
      at: r.at,
      trigger: r.trigger,
      sessionId: r.session_id,
      turnId: r.turn_id,
      status: r.status,
      reason: r.reason,
    }),
  );

/** A page of a schedule's runs, newest first, after the run `after` (a cursor: its time and id). */
export async function listRuns(
  db: Db,
  scheduleId: string,
  page: { limit: number; after: { at: string; id: string } | null },
): Promise<{ runs: ScheduleRun[]; more: boolean }> {
  const { after, limit } = page;
  const statement = after
    ? db
        .prepare(
          `SELECT * FROM schedule_runs WHERE schedule_id = ? AND (at < ? OR (at = ? AND id < ?))
           ORDER BY at DESC, id DESC LIMIT ?`,
        )
        .bind(scheduleId, after.at, after.at, after.id, limit + 1)
    : db
        .prepare("SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY at DESC, id DESC LIMIT ?")
        .bind(scheduleId, limit + 1);
  const { results } = await statement.all();
  const runs = results.map((row) => RunRow.parse(row));
  return { runs: runs.slice(0, limit), more: runs.length > limit };
}

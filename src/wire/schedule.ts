// The schedules API's bodies and answers: a schedule as a client creates, changes and reads it, and the record of
// each of its runs. One zod schema each; the types are inferred from them.
import { z } from "zod";
import { typedName } from "../typed-name";
import { MAX_MESSAGE_CHARS } from "./session";

export const MAX_SCHEDULE_NAME_CHARS = 80;

const name = z.string().trim().min(1, "must not be empty").max(MAX_SCHEDULE_NAME_CHARS).superRefine(typedName);
const prompt = z.string().trim().min(1, "must not be empty").max(MAX_MESSAGE_CHARS);
const timingFields = {
  cron: z
    .string()
    .max(200)
    .optional()
    .describe('Five fields (minute hour day-of-month month day-of-week) in `timezone`, e.g. "0 9 * * 1".'),
  at: z.string().max(64).optional().describe('One ISO 8601 time with its offset, e.g. "2026-12-01T09:00:00+01:00".'),
  every: z
    .string()
    .max(32)
    .optional()
    .describe('An interval of at least a minute: "15m", "1h", "1h30m", "1d", or ISO 8601 "PT15M".'),
  timezone: z.string().max(64).optional().describe('An IANA time zone ("Europe/Berlin"); UTC without one.'),
};

export const CreateScheduleBody = z.strictObject({
  name: name.describe("What the schedule is called; each run's new session is titled by it."),
  prompt: prompt.describe("The message each run sends."),
  mode: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("The mode of each run's new session; the default mode without one."),
  ...timingFields,
  sessionId: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "A session each run continues (yours, or as an admin your org's); without one each run starts a new session.",
    ),
});
export type CreateScheduleBody = z.infer<typeof CreateScheduleBody>;

/** A change: any of the fields; a new cron, at or every replaces the timing (with the zone given, or the old one). */
export const PatchScheduleBody = z
  .strictObject({
    name: name.optional(),
    prompt: prompt.optional(),
    mode: z.string().min(1).max(64).optional(),
    ...timingFields,
    enabled: z.boolean().optional().describe("false: no run until it is true again (Run now still works)."),
  })
  .refine((body) => Object.keys(body).length > 0, { message: "must change at least one field" });
export type PatchScheduleBody = z.infer<typeof PatchScheduleBody>;

export const RunStatus = z.enum(["running", "paused", "completed", "failed", "cancelled", "skipped"]);
export type RunStatus = z.infer<typeof RunStatus>;

/** One run: the turn it started, or why it did not run (`reason`). */
export const ScheduleRun = z.object({
  runId: z.string(),
  scheduleId: z.string(),
  /** The time it was due (a run asked for by hand: when it was asked). */
  dueAt: z.string(),
  /** When it started, or was given up. */
  at: z.string(),
  trigger: z.enum(["schedule", "manual"]),
  sessionId: z.string().nullable(),
  turnId: z.string().nullable(),
  status: RunStatus,
  /** Why it was skipped or failed, e.g. `budget_exceeded: ...`; null otherwise. */
  reason: z.string().nullable(),
});
export type ScheduleRun = z.infer<typeof ScheduleRun>;

export const LastRun = ScheduleRun.pick({ at: true, sessionId: true, turnId: true, status: true, reason: true });

export const Schedule = z.object({
  scheduleId: z.string(),
  name: z.string(),
  /** Whose schedule it is (runs act as them). */
  user: z.string(),
  mode: z.string(),
  prompt: z.string(),
  cron: z.string().nullable(),
  at: z.string().nullable(),
  every: z.string().nullable(),
  timezone: z.string(),
  sessionId: z.string().nullable(),
  enabled: z.boolean(),
  /** The next run; null when there is none (disabled, or an `at` that has run). */
  nextRunAt: z.string().nullable(),
  lastRun: LastRun.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Schedule = z.infer<typeof Schedule>;

export const ScheduleList = z.object({ schedules: z.array(Schedule) });
export const ScheduleRunPage = z.object({ runs: z.array(ScheduleRun), nextCursor: z.string().nullable() });
export const ScheduleDeleted = z.object({ scheduleId: z.string(), deleted: z.literal(true) });

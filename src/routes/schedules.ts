// /context/schedules: prompts that run on their own, on a cron expression in a time zone, once at a time, or every
// so often (src/jobs/: the timing, the runner object whose alarm runs them, the record of each run). A member's
// schedules are theirs; an admin of the org may read and act on the org's; anyone else gets 404.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { refreshLastRun, refreshRun } from "../jobs/run-status";
import {
  countSchedules,
  deleteSchedule,
  findSchedule,
  insertSchedule,
  listRuns,
  listSchedules,
  newScheduleId,
  type ScheduleRecord,
  scheduleView,
  updateSchedule,
} from "../jobs/schedule-rows";
import { type RunSpec, runSpecOf } from "../jobs/schedule-run";
import { runnerOf } from "../jobs/schedule-runner";
import {
  nextRunAfter,
  readTiming,
  type ScheduleTiming,
  type TimingInput,
  TimingProblem,
} from "../jobs/schedule-timing";
import { D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import { quoted } from "../quote";
import { callerOf, sessionStubOrNull } from "../session/session-client";
import { settings } from "../settings";
import { mayActOnSession } from "../tenancy/ownership";
import {
  CreateScheduleBody,
  PatchScheduleBody,
  Schedule,
  ScheduleDeleted,
  ScheduleList,
  ScheduleRun,
  ScheduleRunPage,
} from "../wire/schedule";

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["schedules"] };
const ScheduleId = z.object({ scheduleId: z.string().min(1).max(200) });
const RunsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("Runs a page (1 to 100, 20 by default)."),
  cursor: z.string().min(1).max(500).optional().describe("The nextCursor of the previous page."),
});

/** Open last runs the list brings up to date in one request (the others on a later one, or by GET of the schedule). */
const LIST_REFRESHES = 20;

const isOpen = (run: { status: string } | null) => run?.status === "running" || run?.status === "paused";

function scheduleNotFound(scheduleId: string): ApiError {
  return new ApiError("schedule_not_found", `Schedule ${quoted(scheduleId)} not found.`);
}

/** The schedule, when the caller may read and act on it (its owner, an admin of its org); else 404. */
async function ownedSchedule(c: AppContext, scheduleId: string): Promise<ScheduleRecord> {
  const schedule = await findSchedule(c.get("db"), scheduleId);
  if (!schedule || !mayActOnSession(callerOf(c), schedule)) throw scheduleNotFound(scheduleId);
  return schedule;
}

/**
 * A schedule that continues a session starts turns there: it is changed or run by hand only by someone who may act in
 * that session now (its owner, an admin of its org), as on create. Its creator holding another, narrower key, or no
 * longer an admin, is answered 404 session_not_found. Turning it off needs no more than the schedule.
 */
async function mayDriveSessionOf(c: AppContext, schedule: ScheduleRecord): Promise<void> {
  if (schedule.sessionId === null) return;
  const stub = sessionStubOrNull(c.env, schedule.sessionId);
  const session = stub ? await stub.getSession(callerOf(c)) : null;
  if (!session?.ok) {
    throw new ApiError("session_not_found", `Session ${quoted(schedule.sessionId)} not found.`, {
      param: "sessionId",
    });
  }
}

/** The timing read from the body, or a 400 naming the field that is wrong. */
function timingOf(input: TimingInput, now: number): ScheduleTiming {
  try {
    return readTiming(input, now);
  } catch (error) {
    if (error instanceof TimingProblem) throw new ApiError("invalid_request", error.message, { param: error.param });
    throw error;
  }
}

/** The mode a schedule's runs start their sessions in: one of the org's catalog (400 unknown_mode otherwise). */
async function modeOf(c: AppContext, asked: string | undefined): Promise<string> {
  const catalog = new D1AgentModeCatalogService(c.get("db"), c.get("principal").org);
  const mode = asked === undefined ? await catalog.getDefaultMode() : await catalog.getMode(asked);
  if (!mode) throw new ApiError("unknown_mode", await unknownModeMessage(catalog, asked ?? ""), { param: "mode" });
  return mode.key;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function encodeRunCursor(run: ScheduleRun): string {
  return btoa(JSON.stringify([run.at, run.runId]))
    .replace(/=+$/, "")
    .replaceAll("+", "-")
    .replaceAll("/", "_");
}

function decodeRunCursor(cursor: string): { at: string; id: string } | null {
  try {
    const parsed = z
      .tuple([z.string(), z.string()])
      .safeParse(JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/"))));
    return parsed.success ? { at: parsed.data[0], id: parsed.data[1] } : null;
  } catch {
    // Not base64 or not JSON: not a cursor of ours.
    return null;
  }
}

export const scheduleRoutes = routes()
  .openapi(
    createRoute({
      method: "post",
      path: "/context/schedules",
      summary: "A prompt that runs on its own: on a cron expression in a time zone, once at a time, or every so often",
      description:
        "Exactly one of `cron` (five fields, in `timezone`, UTC without one), `at` (an ISO time in the future) or " +
        "`every` (`15m`, `1h`, `PT15M`: at least a minute). Each run is a turn of the caller's, metered and budgeted " +
        "as their own: in a new session titled by `name`, or continuing `sessionId`. docs/schedules.md.",
      ...chat,
      request: jsonBody(CreateScheduleBody, "The prompt, its timing and where it runs."),
      responses: { 201: json(Schedule, "The schedule, with its next run."), ...errors(400, 401, 403, 404, 409) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const now = Date.now();
      const timing = timingOf(body, now);
      const caller = callerOf(c);
      const limits = settings(c.env).schedules;
      const counts = await countSchedules(c.get("db"), caller.org, caller.user);
      if (counts.user >= limits.maxPerUser || counts.org >= limits.maxPerOrg) {
        const [whose, limit] =
          counts.user >= limits.maxPerUser
            ? ["you have", limits.maxPerUser]
            : ["your organization has", limits.maxPerOrg];
        throw new ApiError(
          "schedule_limit_reached",
          `You cannot create another schedule: ${whose} ${limit}, the most allowed (delete one first).`,
        );
      }
      const mode = await modeOf(c, body.mode);
      if (body.sessionId !== undefined) {
        const stub = sessionStubOrNull(c.env, body.sessionId);
        const session = stub ? await stub.getSession(caller) : null;
        if (!session?.ok) {
          throw new ApiError("session_not_found", `Session ${quoted(body.sessionId)} not found.`, {
            param: "sessionId",
          });
        }
      }
      const scheduleId = newScheduleId();
      const nextRunAt = nextRunAfter(timing, now);
      // The row first, then its runner: a runner without its row would run unseen, and could not be deleted. A runner
      // that cannot be armed takes its row back with it.
      const spec: RunSpec = {
        scheduleId,
        org: caller.org,
        user: caller.user,
        keyId: caller.keyId,
        admin: caller.admin === true,
        name: body.name.replace(/\s+/g, " "),
        mode,
        prompt: body.prompt,
        sessionId: body.sessionId ?? null,
      };
      const record = { ...spec, timing, enabled: true, nextRunAt: iso(nextRunAt) };
      await insertSchedule(c.get("db"), record);
      try {
        await runnerOf(c.env, scheduleId).arm({ scheduleId, spec, timing, enabled: true, nextRunAt });
      } catch (error) {
        await deleteSchedule(c.get("db"), scheduleId);
        throw error;
      }
      const at = new Date(now).toISOString();
      return c.json(scheduleView({ ...record, createdAt: at, updatedAt: at, lastRun: null, lastRunId: null }), 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/schedules",
      summary: "Your schedules (an admin: the org's), each with its next run and its last run",
      description:
        "A last run still `running` or `paused` is brought up to date from its session, 20 a request at most (the " +
        "rest on the next request; `GET /context/schedules/:id` always).",
      ...chat,
      responses: { 200: json(ScheduleList, "The schedules, oldest first."), ...errors(401, 403) },
    }),
    async (c) => {
      const schedules = await listSchedules(c.get("db"), callerOf(c));
      // The last runs still open are brought up to date, LIST_REFRESHES a request at most: a list of a thousand
      // schedules that all just ran costs a thousand session calls once, spread over requests, never in one.
      let refreshes = 0;
      const fresh = await Promise.all(
        schedules.map((schedule) =>
          isOpen(schedule.lastRun) && refreshes++ < LIST_REFRESHES
            ? refreshLastRun(c.env, c.get("db"), schedule)
            : schedule,
        ),
      );
      return c.json({ schedules: fresh.map(scheduleView) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/schedules/{scheduleId}",
      summary: "One schedule, with its next run and its last run",
      ...chat,
      request: { params: ScheduleId },
      responses: { 200: json(Schedule, "The schedule."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const schedule = await ownedSchedule(c, c.req.valid("param").scheduleId);
      return c.json(scheduleView(await refreshLastRun(c.env, c.get("db"), schedule)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "patch",
      path: "/context/schedules/{scheduleId}",
      summary: "Changes a schedule: its name, prompt, mode, timing, or enables and disables it",
      description:
        "A new `cron`, `at` or `every` replaces the timing (in `timezone`, or the schedule's zone); `every` then " +
        "counts from now. A disabled schedule does not run until enabled again (Run now still runs it).",
      ...chat,
      request: { params: ScheduleId, ...jsonBody(PatchScheduleBody, "What changes.") },
      responses: { 200: json(Schedule, "The schedule as it now is."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const schedule = await ownedSchedule(c, c.req.valid("param").scheduleId);
      const body = c.req.valid("json");
      const turnsOffOnly =
        body.enabled === false && Object.values({ ...body, enabled: undefined }).every((v) => v === undefined);
      if (!turnsOffOnly) await mayDriveSessionOf(c, schedule);
      const now = Date.now();
      const newTiming = body.cron !== undefined || body.at !== undefined || body.every !== undefined;
      const old = schedule.timing;
      const timing = newTiming
        ? timingOf({ cron: body.cron, at: body.at, every: body.every, timezone: body.timezone ?? old.timezone }, now)
        : body.timezone !== undefined
          ? { ...old, timezone: timingOf({ every: "1m", timezone: body.timezone }, now).timezone }
          : old;
      const mode = body.mode === undefined ? schedule.mode : await modeOf(c, body.mode);
      const enabled = body.enabled ?? schedule.enabled;
      const nextRunAt = enabled ? nextRunAfter(timing, now) : null;
      const name = body.name?.replace(/\s+/g, " ") ?? schedule.name;
      const prompt = body.prompt ?? schedule.prompt;
      const { scheduleId } = schedule;
      const spec: RunSpec = { ...runSpecOf(schedule), name, prompt, mode };
      await runnerOf(c.env, scheduleId).arm({ scheduleId, spec, timing, enabled, nextRunAt });
      await updateSchedule(c.get("db"), scheduleId, { name, prompt, mode, timing, enabled, nextRunAt: iso(nextRunAt) });
      const changed = await findSchedule(c.get("db"), schedule.scheduleId);
      if (!changed) throw scheduleNotFound(schedule.scheduleId);
      return c.json(scheduleView(changed), 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/context/schedules/{scheduleId}",
      summary: "Deletes a schedule and the record of its runs (the sessions its runs made stay)",
      ...chat,
      request: { params: ScheduleId },
      responses: { 200: json(ScheduleDeleted, "The schedule is deleted."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const schedule = await ownedSchedule(c, c.req.valid("param").scheduleId);
      await runnerOf(c.env, schedule.scheduleId).disarm();
      await deleteSchedule(c.get("db"), schedule.scheduleId);
      return c.json({ scheduleId: schedule.scheduleId, deleted: true as const }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/schedules/{scheduleId}/run",
      summary: "Runs the schedule now, once (its timing is unchanged)",
      description:
        "Answers the run's record: `running` with its session and turn, `failed` with the reason (the budget, a " +
        "revoked key), or `skipped` when the session it continues is busy (a run by hand does not wait).",
      ...chat,
      request: { params: ScheduleId },
      responses: { 202: json(ScheduleRun, "The run."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const schedule = await ownedSchedule(c, c.req.valid("param").scheduleId);
      await mayDriveSessionOf(c, schedule);
      const run = await runnerOf(c.env, schedule.scheduleId).runNow();
      if (!run) throw scheduleNotFound(schedule.scheduleId);
      return c.json(run, 202);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/schedules/{scheduleId}/runs",
      summary: "The schedule's runs, newest first, a page at a time",
      ...chat,
      request: { params: ScheduleId, query: RunsQuery },
      responses: { 200: json(ScheduleRunPage, "A page of runs."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const schedule = await ownedSchedule(c, c.req.valid("param").scheduleId);
      const { limit, cursor } = c.req.valid("query");
      const after = cursor === undefined ? null : decodeRunCursor(cursor);
      if (cursor !== undefined && !after) {
        throw new ApiError("invalid_request", "cursor is not a cursor from this list: pass nextCursor as it came.", {
          param: "cursor",
        });
      }
      const page = await listRuns(c.get("db"), schedule.scheduleId, { limit, after });
      const runs = await Promise.all(page.runs.map((run) => refreshRun(c.env, c.get("db"), schedule, run, run.runId)));
      const last = runs.at(-1);
      return c.json({ runs, nextCursor: page.more && last ? encodeRunCursor(last) : null }, 200);
    },
  );

// ScheduleRunner: one Durable Object per schedule (named by its id), whose alarm is the schedule's clock.
//
// Why an object of its own rather than the session's alarm or the Worker's cron trigger: the cron trigger fires once
// a minute at best and would scan every schedule to find the due ones; a schedule without a session has no session
// to hold its alarm until its run makes one, and a session's one alarm already serves its turns (resume checks,
// pause expiry). An object per schedule has one alarm that is exactly its next run (to the second, whatever the
// number of schedules, as each alarm fires on its own), survives restarts and deploys (alarms are stored), and a
// late alarm (the object was down when it was due) fires once on wake-up: the run happens once, and the next run
// is computed from now, so missed slots are not replayed. D1 keeps the list people read (`schedules`, with the next
// run mirrored into it) and each run's record (`schedule_runs`); the object owns the timing, and keeps what a run
// needs (the prompt, the mode, who it acts as; written at each create and change), so a due run reads nothing from D1
// before its turn but whether its creator's key still stands; and a run that starts a new session has it made two
// minutes ahead (unlisted until the run), so the due second holds only the admission and the turn's start.
import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { JsonAdminLogger } from "../observability/admin-logger";
import { countedEnv } from "../observability/op-counts";
import { settings } from "../settings";
import { publishEvent, type WebhookEvent } from "../webhooks/events";
import type { ScheduleRun } from "../wire/schedule";
import { setNextRun } from "./schedule-rows";
import { attemptRun, discardPrepared, prepareSession, type RunDeps, RunSpec, skipRun } from "./schedule-run";
import { nextRunAfter, ScheduleTiming } from "./schedule-timing";

/** How long a run whose session is busy waits at most when the schedule has no next run (an `at`). */
export const BUSY_WAIT_WITHOUT_NEXT_MS = 3_600_000;

/**
 * How long before its slot a run that starts a new session has that session made (prepareSession): making a
 * session object (its storage, its schema) is about half of a run's work, and 1,000 runs due in the same second
 * would otherwise all make theirs in it. Long enough for 1,000 to be made before they are due on a 2-core machine
 * under `wrangler dev` (bench:schedules), short enough that a schedule changed meanwhile rarely discards one.
 */
export const PREPARE_AHEAD_MS = 120_000;

/** What the object keeps: the timing, and a run that waits for its busy session. */
export const RunnerState = z.object({
  scheduleId: z.string(),
  /** What each run sends, where, and as whom. */
  spec: RunSpec,
  timing: ScheduleTiming,
  enabled: z.boolean(),
  /** The next slot (ms), or null: none (disabled, or an `at` that ran). */
  nextRunAt: z.number().nullable(),
  /** A run that found its session busy: it is tried again shortly, and skipped if still busy at the next slot. */
  waiting: z.object({ dueAt: z.number(), sessionId: z.string(), reason: z.string() }).nullable(),
  /** The next run's new session, made ahead of its slot and not yet listed (null: none made yet, or not needed). */
  prepared: z.string().nullable().default(null),
});
export type RunnerState = z.infer<typeof RunnerState>;

const STATE = "state";

/** What a session made ahead is made from: a change of any of these discards it (a new prompt does not). */
const madeFrom = (spec: RunSpec) => JSON.stringify([spec.org, spec.user, spec.mode, spec.name, spec.sessionId]);

export class ScheduleRunner extends DurableObject<Cloudflare.Env> {
  private readonly logger: JsonAdminLogger;
  /** Where events go: publishEvent; a test puts a recorder here (runInDurableObject). */
  publish: (event: WebhookEvent) => void;

  constructor(ctx: DurableObjectState, workerEnv: Cloudflare.Env) {
    // npm run bench:ops's counting bindings when it asks for them (src/observability/op-counts.ts), else the env itself.
    const env = countedEnv(workerEnv);
    super(ctx, env);
    this.logger = new JsonAdminLogger({ scheduleRunner: ctx.id.toString() });
    this.publish = (event) => publishEvent(env, event, (work) => ctx.waitUntil(work));
  }

  /** The schedule's timing, as created or changed: its next run is `nextRunAt` (ms, computed by the route). */
  async arm(config: {
    scheduleId: string;
    spec: RunSpec;
    timing: ScheduleTiming;
    enabled: boolean;
    nextRunAt: number | null;
  }): Promise<void> {
    const previous = await this.state();
    // A run waiting for its busy session goes on waiting across a change of name or prompt; a new timing drops it.
    const waiting =
      previous && config.enabled && JSON.stringify(previous.timing) === JSON.stringify(config.timing)
        ? previous.waiting
        : null;
    // A session made ahead keeps serving while what it was made from (owner, mode, title) is unchanged.
    let prepared = previous?.prepared ?? null;
    if (previous && prepared && (!config.enabled || madeFrom(previous.spec) !== madeFrom(config.spec))) {
      await discardPrepared(this.deps(), previous.spec, prepared);
      prepared = null;
    }
    await this.save({ ...config, waiting, prepared }, Date.now());
  }

  /** The schedule was deleted: no alarm, nothing kept (a session made ahead of its run is deleted too). */
  async disarm(): Promise<void> {
    const state = await this.state();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    if (state?.prepared) await discardPrepared(this.deps(), state.spec, state.prepared);
  }

  /** POST .../run: one run now, by hand; the timing is unchanged. A busy session's run is skipped, not waited for. */
  async runNow(): Promise<ScheduleRun | null> {
    const state = await this.state();
    if (!state) return null;
    const now = Date.now();
    const attempt = await attemptRun(this.deps(), state.spec, now, "manual");
    return attempt.kind === "recorded" ? attempt.run : skipRun(this.deps(), state.spec, now, "manual", attempt);
  }

  /** What the object keeps (tests read it). */
  async state(): Promise<RunnerState | null> {
    const stored = await this.ctx.storage.get(STATE);
    return stored === undefined ? null : RunnerState.parse(stored);
  }

  override async alarm(): Promise<void> {
    const state = await this.state();
    if (!state) return;
    const now = Date.now();
    try {
      await this.tick(state, now);
    } catch (error) {
      // Logged with its stack; the alarm is set again for the next slot (a rethrow would retry this run, and could
      // start its turn twice).
      this.logger.addException("[ScheduleRunner_Alarm]", error, [["ScheduleId", state.scheduleId]]);
      const nextRunAt = state.enabled ? nextRunAfter(state.timing, now) : null;
      // No session is made ahead after a failure (the next run makes its own): a failing one is not retried at once.
      await this.save({ ...state, nextRunAt, waiting: null, prepared: null }, now, false);
    }
  }

  /** The alarm's work at `now`: a waiting run tried again, or the due slot run (once, however late). */
  private async tick(state: RunnerState, now: number): Promise<void> {
    const deps = this.deps();
    const { spec } = state;
    let { waiting, nextRunAt } = state;
    if (waiting) {
      const giveUpAt = nextRunAt ?? waiting.dueAt + BUSY_WAIT_WITHOUT_NEXT_MS;
      if (now < giveUpAt) {
        const attempt = await attemptRun(deps, spec, waiting.dueAt, "schedule");
        waiting = attempt.kind === "busy" ? { ...waiting, reason: attempt.reason } : null;
        await this.save({ ...state, waiting }, now);
        return;
      }
      // Still busy when the next slot came: this run is skipped, and the slot's own run goes on below.
      const reason = `${waiting.reason} It was still busy at the next run, so this run was skipped.`;
      await skipRun(deps, spec, waiting.dueAt, "schedule", { sessionId: waiting.sessionId, reason });
      waiting = null;
    }
    if (nextRunAt === null || !state.enabled || now < nextRunAt) {
      // Nothing due (disabled, done, or woken early by a retry no longer needed): wait for the slot, with the
      // slot's new session made now when it is near.
      const ahead = this.prepareAt(state, now);
      const prepared = ahead !== null && ahead <= now ? await prepareSession(this.env, spec) : state.prepared;
      await this.save({ ...state, waiting, prepared }, now);
      return;
    }
    const dueAt = nextRunAt;
    // Every slot up to now is this one run: the next is the first after now.
    nextRunAt = nextRunAfter(state.timing, now);
    const attempt = await attemptRun(deps, spec, dueAt, "schedule", nextRunAt, state.prepared);
    waiting = attempt.kind === "busy" ? { dueAt, sessionId: attempt.sessionId, reason: attempt.reason } : null;
    await this.save({ ...state, nextRunAt, waiting, prepared: null }, now);
    // A run that waits wrote nothing yet: the list's next run is mirrored now.
    if (attempt.kind === "busy") await setNextRun(this.env.DB, spec.scheduleId, nextRunAt);
  }

  /**
   * When the next slot's new session is to be made (PREPARE_AHEAD_MS before it, or now when that has passed), or
   * null: the schedule continues a session, has no next slot, or has its session made already.
   */
  private prepareAt(state: RunnerState, now: number): number | null {
    if (!state.enabled || state.nextRunAt === null || state.prepared !== null || state.spec.sessionId !== null) {
      return null;
    }
    const at = Math.max(now, state.nextRunAt - PREPARE_AHEAD_MS);
    return at < state.nextRunAt ? at : null;
  }

  /**
   * Stores the state and sets the alarm: the next slot, sooner to make its session ahead (`prepare`, unless told
   * not to), or sooner to try a waiting run again.
   */
  private async save(state: RunnerState, now: number, prepare = true): Promise<void> {
    await this.ctx.storage.put(STATE, state);
    const retry = state.waiting ? now + settings(this.env).schedules.busyRetryMs : null;
    const next = state.enabled ? state.nextRunAt : null;
    const ahead = prepare ? this.prepareAt(state, now) : null;
    const candidates = [retry, next, ahead].filter((at): at is number => at !== null);
    if (candidates.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...candidates));
  }

  private deps(): RunDeps {
    return { env: this.env, db: this.env.DB, logger: this.logger, publish: this.publish, now: () => Date.now() };
  }
}

/** The runner of a schedule. */
export function runnerOf(env: Cloudflare.Env, scheduleId: string): DurableObjectStub<ScheduleRunner> {
  return env.SCHEDULE_RUNNER.get(env.SCHEDULE_RUNNER.idFromName(scheduleId));
}

// AgentReasoner: the agent loop (AGN-005 §6, the design document's Decision 2). Plain TypeScript over a TurnStore,
// so it runs inside the session object and in unit tests alike. Each step of a turn answers with a NextStep
// (next-step.ts) and the loop acts on it: run the tools, pause for a person or the client, answer, or fail.

import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import type { TurnObserver } from "../observability/turn-observer";
import { type Outcome, type Refusal, refuse } from "../refusal";
import type { ModelRouter } from "../routing/model-router";
import { DEFAULT_ROUTE } from "../routing/model-routes";
import { CHARS_PER_TOKEN } from "../token-estimate";
import type { ElicitationRequest } from "../tools/elicitation";
import type { AgentToolRegistry } from "../tools/registry";
import { IMAGES_NOT_ACCEPTED, isImageAttachment, type MessageAttachment, storedAttachment } from "../wire/attachments";
import type { ElicitationAnswer } from "../wire/elicitation";
import type { ApprovalDecision, ClientToolResult } from "../wire/session";
import type { AgentExecuteResponse } from "../wire/turn";
import type { AgentConfig } from "./agent-config";
import type { StoredToolCall } from "./agent-tool-call";
import { askModel, limitStep, workedMs } from "./ask-model";
import { refuseBlockedMessage } from "./blocked-message";
import type { MemoryRecallSource } from "./memory-step";
import type { CallReservation, ModelCallBudget, TurnMeter } from "./model-call-budget";
import {
  buildModelRequest,
  type ClientToolSet,
  type ModelStepDeps,
  prefetchModelRequest,
  type RemoteToolSource,
  registryForMode,
  withStepCache,
} from "./model-step";
import { NEXT_MODEL_CALL, type NextStep, type Run } from "./next-step";
import type { TokenCalibration } from "./token-calibration";
import { ToolBatch } from "./tool-batch";
import { CANCELLED, finishTurn, pauseTurn, type TurnEndingDeps } from "./turn-ending";
import type { TurnEvents } from "./turn-events";
import { type Checked, type TurnGuardrailSource, TurnGuardrails } from "./turn-guardrails";
import type { TurnState, TurnStore } from "./turn-store";

export interface AgentReasonerDeps {
  store: TurnStore;
  /** How a model call reaches the model of the mode's route (or its fallbacks). */
  router: ModelRouter;
  registry: AgentToolRegistry;
  catalog: AgentModeCatalogService;
  basePrompt: () => Promise<string>;
  config: AgentConfig;
  logger: AdminLogger;
  /** Creates a session in `mode` linked to this one; returns its id. */
  createBranchSession: (mode: string) => Promise<string>;
  events?: TurnEvents;
  /** Counts every model call against the caller's key; absent, calls are not limited. */
  budget?: ModelCallBudget;
  /** Reserves every model call in the org's meter (token and cost budgets); absent, calls are not metered. */
  meter?: TurnMeter;
  /** The tools of a mode's `mcp:` entries; absent, modes offer built-in tools only. */
  remoteTools?: RemoteToolSource;
  /** The client's own tools for this request (the OpenAI door). */
  clientTools?: ClientToolSet;
  /**
   * Asks the user for input a tool needs in the middle of its call (an MCP server's elicitation) and waits for
   * the answer; absent, no one can answer and the tool is told the user declined.
   */
  elicit?: (request: ElicitationRequest & { toolCallId: string }, signal: AbortSignal) => Promise<ElicitationAnswer>;
  /** Who the request acts for, kept with the turn so that a resumed run acts for them too. */
  caller?: TurnCaller;
  /** The OpenAI door's request options, kept with the turn so that a resumed run has them too. */
  door?: TurnState["door"];
  /** The token estimate calibrated per route from the usage each answer reports (the session object's). */
  calibration?: TokenCalibration | undefined;
  /** Hears what each run of a turn does (the turn's timeline, its trace). */
  observer?: TurnObserver | undefined;
  /** The session owner's memories for the prompt (read once per request), and whether memory is on. */
  memory?: MemoryRecallSource | undefined;
  /** The guardrails of the session's mode and org, and its mask vault; absent, nothing is checked. */
  guardrails?: TurnGuardrailSource | undefined;
  now?: () => number;
}

export type TurnCaller = NonNullable<TurnState["caller"]>;

/** A new turn's first model call, paid before the turn is stored: counted against the key, reserved in the budget. */
export interface FirstCall {
  /** The key's limit counted it (false when no budget limits the reasoner). */
  prepaid: boolean;
  reservation?: CallReservation;
}

export class AgentReasoner {
  private readonly now: () => number;
  private readonly stepDeps: ModelStepDeps;
  private readonly tools: ToolBatch;
  private readonly guard: TurnGuardrails | undefined;

  constructor(private readonly deps: AgentReasonerDeps) {
    this.now = deps.now ?? Date.now;
    const cached = withStepCache(deps);
    this.guard = deps.guardrails
      ? new TurnGuardrails(
          deps.guardrails,
          async () =>
            (await cached.catalog.getMode(deps.store.identity().mode)) ?? (await cached.catalog.getDefaultMode()),
          () => deps.observer,
        )
      : undefined;
    this.stepDeps = { ...cached, ...(this.guard ? { guard: this.guard } : {}) };
    this.tools = new ToolBatch({ ...deps, guard: this.guard, now: this.now });
  }

  /**
   * A new turn for the user's message. Whether it may start is the session's admission (src/session/turn-admission.ts),
   * which pays its first model call (`first`) before anything is stored; a caller outside the session object (the
   * agent's own tests) that brings none has it paid here, by the same function.
   */
  async startTurn(
    content: string,
    signal?: AbortSignal,
    options: { attachments?: readonly MessageAttachment[]; first?: FirstCall } = {},
  ): Promise<Outcome<AgentExecuteResponse>> {
    const attachments = (options.attachments ?? []).map(storedAttachment);
    const paid = options.first
      ? { ok: true as const, value: options.first }
      : await this.payFirstCall(content, options.attachments ?? []);
    if (!paid.ok) return paid;
    const first = paid.value;
    const now = this.now();
    const turn: TurnState = {
      turnId: crypto.randomUUID(),
      startedAt: now,
      workedMs: 0,
      iterations: 0,
      parseFailures: 0,
      batch: null,
      runSince: now,
      ...(this.deps.caller ? { caller: this.deps.caller } : {}),
      ...(this.deps.door ? { door: this.deps.door } : {}),
    };
    this.deps.store.saveTurn("running", turn);
    // The message is checked once the turn holds the session, before anything of it is stored or sent: a block
    // leaves the refusal alone; a check that throws ends the turn as broken (the driver does), as the loop's steps do.
    let input: Checked | null;
    try {
      input = this.guard ? await this.guard.check("input", content, false) : null;
    } catch (error) {
      first.reservation?.settle(null);
      throw error;
    }
    if (input?.blocked && this.guard) {
      first.reservation?.settle(null);
      return refuseBlockedMessage({ ...this.deps, now: this.now }, this.guard, turn, {
        ...input,
        blocked: input.blocked,
      });
    }
    // Stored as the person sees it: a mask's values restored (the model reads their placeholders), a redaction kept.
    const stored = input && this.guard ? this.guard.restore(input.text) : content;
    this.deps.store.appendMessage({
      turnId: turn.turnId,
      role: "user",
      content: stored,
      ...(attachments.length > 0 ? { attachments } : {}),
      kind: "message",
    });
    this.deps.events?.turnStarted?.(turn.turnId);
    this.deps.observer?.runStarted(turn.turnId, "start");
    if (input) this.guard?.record(input.decisions);
    const run: Run = { since: now, signal, prepaid: first.prepaid };
    if (first.reservation) run.reservation = first.reservation;
    return { ok: true, value: await this.continueTurn(turn, run) };
  }

  /**
   * A new turn's first model call, paid before anything is stored: one call of the key's limit and its reservation
   * in the org's budget, asked while the mode and the base prompt are read (the first call needs them, and this
   * reasoner keeps them for it). A refusal (`rate_limit_exceeded`, `budget_exceeded`) holds nothing back.
   */
  async payFirstCall(content: string, files: readonly MessageAttachment[]): Promise<Outcome<FirstCall>> {
    const attachments = files.map(storedAttachment);
    const prefetched = prefetchModelRequest(this.stepDeps, content);
    const [grant, admission] = await Promise.all([
      this.deps.budget?.take(),
      // A mode that cannot be read is priced as `default`: the turn then fails on it, stored, like every failed turn.
      this.deps.meter?.reserve(
        this.firstCallChars(content) + attachments.reduce((sum, a) => sum + (a.text?.length ?? 0), 0),
        // The mode read the prefetch started (kept by withStepCache), not the memory read beside it.
        this.modeRoute().catch(() => DEFAULT_ROUTE),
      ),
      prefetched,
    ]);
    if (grant && !grant.ok) {
      if (admission?.ok) admission.reservation.settle(null);
      return refuse("rate_limit_exceeded", grant.message, { retryAfterSeconds: grant.retryAfterSeconds });
    }
    if (admission && !admission.ok) {
      return refuse("budget_exceeded", admission.message, { retryAfterSeconds: admission.retryAfterSeconds });
    }
    const reservation = admission?.ok ? { reservation: admission.reservation } : {};
    return { ok: true, value: { prepaid: grant !== undefined, ...reservation } };
  }

  /** Why the message's files cannot go to the session's mode (an image, on a route that reads none), or null. */
  async attachmentRefusal(attachments: readonly MessageAttachment[]): Promise<Refusal | null> {
    const image = attachments.findIndex(isImageAttachment);
    if (image < 0 || (await this.deps.router.acceptsImages?.(await this.modeRoute()))) return null;
    return refuse("attachment_not_accepted", IMAGES_NOT_ACCEPTED, { param: `attachments.${image}` });
  }

  /** A generous size of the first request of a turn: the message, the history it may carry, the prompt. */
  private firstCallChars(content: string): number {
    const { config, store } = this.deps;
    const chars = (tokens: number) => tokens * CHARS_PER_TOKEN;
    // Read back only as far as the budget: a long session's first call costs no more to price than a short one's.
    let history = 0;
    for (const m of store.newestFirst()) {
      history += m.content?.length ?? 0;
      if (history >= chars(config.historyBudgetTokens)) break;
    }
    return content.length + Math.min(history, chars(config.historyBudgetTokens)) + chars(config.promptBudgetTokens);
  }

  /** The route the session's mode takes (the default mode's when the mode is gone). */
  private async modeRoute(): Promise<string> {
    const { catalog, store } = this.stepDeps;
    const mode = (await catalog.getMode(store.identity().mode)) ?? (await catalog.getDefaultMode());
    return mode.modelRoute;
  }

  /** The person's decisions on the paused turn's calls (the session's admission checked that they fit it). */
  async applyApprovals(decisions: ApprovalDecision[], signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const turn = this.currentTurn();
    const pausedAt = turn.pausedAt;
    const run = this.resume(turn, signal);
    this.deps.observer?.runStarted(turn.turnId, "resume_pause");
    this.deps.observer?.wait("approval", { name: "approval", ...(pausedAt ? { startedAt: pausedAt } : {}) }).end();
    await this.beforeLoop(turn, async () => {
      const executor = this.tools.executorFor(await registryForMode(this.stepDeps));
      for (const decision of decisions) {
        const call = this.findCall(turn, decision.toolCallId);
        if (!decision.approved) {
          const why = decision.reason?.trim()
            ? `Tool call denied by the user: ${decision.reason.trim()}`
            : "Tool call denied by the user";
          this.tools.settle({ ...call, approval: "denied", state: "settled", errorMessage: why });
        } else if (call.requiresClientExecution && call.wasExecuted) {
          // Its preflight ran before the person was asked: the prepared request goes to the client as it is.
          this.deps.store.saveToolCall({ ...call, approval: "approved", state: "awaiting_client" });
        } else {
          await this.tools.runApproved(turn, call, run, executor);
        }
      }
    });
    return { ok: true, value: await this.continueTurn(turn, run) };
  }

  /**
   * The client's results for the paused turn's calls (the session's admission checked that they fit it); a result
   * that breaks its tool's declared shape is refused before anything changes.
   */
  async applyToolResults(results: ClientToolResult[], signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const turn = this.currentTurn();
    for (const [index, result] of results.entries()) {
      if (result.resultJson === undefined) continue;
      const problem = this.tools.checkClientResult(this.findCall(turn, result.toolCallId), result.resultJson);
      if (problem) {
        return refuse("invalid_tool_result", `Invalid tool result: ${problem}.`, {
          param: `results.${index}.resultJson`,
        });
      }
    }
    const pausedAt = turn.pausedAt;
    const run = this.resume(turn, signal);
    const { observer } = this.deps;
    observer?.runStarted(turn.turnId, "resume_pause");
    observer?.wait("client", { name: "client", ...(pausedAt ? { startedAt: pausedAt } : {}) }).end();
    await this.beforeLoop(turn, async () => {
      for (const result of results) {
        const call = this.findCall(turn, result.toolCallId);
        const error = result.errorMessage ?? "The client could not execute the tool.";
        observer
          ?.toolCall({ id: call.id, name: call.name, ranOn: "client", ...(pausedAt ? { startedAt: pausedAt } : {}) })
          .end(result.resultJson !== undefined ? { result: result.resultJson } : { error });
        // A client's result is a tool's result too: the tool_result guardrails check it before the model reads it.
        this.tools.settle(
          result.resultJson !== undefined
            ? await this.tools.checkResult({
                ...call,
                state: "settled",
                resultJson: result.resultJson,
                errorMessage: null,
              })
            : { ...call, state: "settled", errorMessage: error },
        );
      }
    });
    return { ok: true, value: await this.continueTurn(turn, run) };
  }

  /**
   * A turn a restart of the session's object cut off, resumed from its last stored step: the open batch's ready
   * calls first (one that may have started runs again only if its tool is repeatable), then the loop goes on, so a
   * model call that was in flight is made again from the stored conversation. The interrupted run counts as
   * working time up to `lastSeenAt`, its last sign of life (its newest frame), when known.
   */
  async resumeInterrupted(lastSeenAt: number | null, signal?: AbortSignal): Promise<AgentExecuteResponse> {
    const turn = this.currentTurn();
    if (turn.runSince !== undefined && lastSeenAt !== null) {
      turn.workedMs = (turn.workedMs ?? 0) + Math.max(0, lastSeenAt - turn.runSince);
    }
    turn.resumes = (turn.resumes ?? 0) + 1;
    const run = this.resume(turn, signal);
    this.deps.observer?.runStarted(turn.turnId, "resume_restart");
    await this.beforeLoop(turn, async () =>
      this.tools.resumeOpen(turn, run, this.tools.executorFor(await registryForMode(this.stepDeps))),
    );
    return this.continueTurn(turn, run);
  }

  /**
   * What a resumed run does before its loop (the decided or answered calls); one that throws there ends the run
   * for its observer, as broken (the driver ends the turn), as a throw inside the loop does.
   */
  private async beforeLoop(turn: TurnState, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.deps.observer?.runEnded("broken", { iterations: turn.iterations, usage: turn.usage ?? null });
      throw error;
    }
  }

  private currentTurn(): TurnState {
    const turn = this.deps.store.turn();
    if (!turn) throw new Error("The session has no open turn.");
    return turn;
  }

  private findCall(turn: TurnState, id: string): StoredToolCall {
    const call = this.deps.store.toolCalls(turn.turnId).find((c) => c.id === id);
    if (!call) throw new Error(`Tool call ${id} vanished.`);
    return call;
  }

  /** A paused turn runs again: the time it waited is not working time, and its pause no longer expires. */
  private resume(turn: TurnState, signal?: AbortSignal): Run {
    delete turn.pausedAt;
    delete turn.pauseExpiresAt;
    const since = this.now();
    turn.runSince = since;
    if (this.deps.caller) turn.caller = this.deps.caller;
    if (this.deps.door) turn.door = this.deps.door;
    else delete turn.door;
    this.deps.store.saveTurn("running", turn);
    return { since, signal, prepaid: false };
  }

  /** The loop: each step's NextStep, until one ends this run (an answer, a pause, a failure). */
  private async continueTurn(turn: TurnState, run: Run): Promise<AgentExecuteResponse> {
    // A run that throws ends as `broken` for its observer (its driver ends the turn as broken).
    let outcome = "broken";
    try {
      for (;;) {
        const step = await this.nextStep(turn, run);
        if (step.type === "run_tools") await this.tools.plan(turn, step, run);
        else if (step.type !== "next_model_call") {
          const response = this.endRun(turn, run, step);
          outcome = response.status;
          return response;
        }
      }
    } finally {
      // A run that ended before its first model call gives that call's reservation back.
      run.reservation?.settle(null);
      this.deps.observer?.runEnded(outcome, { iterations: turn.iterations, usage: turn.usage ?? null });
    }
  }

  /** What the turn does next: the open batch settles first, then the limits are checked, then the model answers. */
  private async nextStep(turn: TurnState, run: Run): Promise<NextStep> {
    const settled = this.tools.settleOpen(turn);
    if (settled.type !== "next_model_call") return settled;
    const limited = await this.checkLimits(turn, run);
    if (limited.type !== "next_model_call") return limited;
    const request = await buildModelRequest(this.stepDeps, turn);
    return askModel({ ...this.deps, guard: this.guard, now: this.now }, turn, run, request);
  }

  /** Before a model call: cancellation, the iteration and time limits, and the key's model call budget. */
  private async checkLimits(turn: TurnState, run: Run): Promise<NextStep> {
    const { config } = this.deps;
    if (run.signal?.aborted) return { type: "fail", outcome: "cancelled", error: CANCELLED };
    if (turn.iterations >= config.maxIterations) return limitStep(this.deps, turn, "iteration_limit", turn.iterations);
    const worked = workedMs(turn, run, this.now());
    if (worked >= config.turnTimeoutMs) return limitStep(this.deps, turn, "turn_timeout", worked);
    if (run.prepaid) {
      run.prepaid = false;
      return NEXT_MODEL_CALL;
    }
    const grant = await this.deps.budget?.take();
    if (grant && !grant.ok) return limitStep(this.deps, turn, "rate_limit_exceeded", grant.retryAfterSeconds);
    return NEXT_MODEL_CALL;
  }

  /** The step that ends this run: the turn pauses (its working time so far kept), answers, or fails. */
  private endRun(
    turn: TurnState,
    run: Run,
    step: Exclude<NextStep, { type: "next_model_call" } | { type: "run_tools" }>,
  ): AgentExecuteResponse {
    const ending = this.endingDeps();
    switch (step.type) {
      case "pause_for_approval":
      case "pause_for_client": {
        const now = this.now();
        turn.workedMs = workedMs(turn, run, now);
        turn.pausedAt = now;
        turn.pauseExpiresAt = now + this.deps.config.pauseTtlMs;
        const status = step.type === "pause_for_approval" ? "awaiting_approval" : "awaiting_client";
        return pauseTurn(ending, turn, status, step.batch);
      }
      case "final_answer":
        return finishTurn(ending, turn, "completed", step.text, { appendAnswer: step.appendAnswer });
      case "fail":
        return finishTurn(ending, turn, step.outcome, "", { error: step.error });
    }
  }

  private endingDeps(): TurnEndingDeps {
    const { store, config, events, logger } = this.deps;
    return { store, config, events, logger, now: this.now };
  }
}

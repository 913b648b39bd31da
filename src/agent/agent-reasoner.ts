// AgentReasoner: the agent loop (AGN-005 §6, the design document's Decision 2). Plain TypeScript over a
// TurnStore, so it runs inside the session object and in unit tests alike.
import { type ChatResponse, ModelError } from "../llm/chat-model";
import { deadline } from "../llm/deadline";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { type Outcome, type Refusal, refuse } from "../refusal";
import type { ModelRouter, ServedBy } from "../routing/model-router";
import { DEFAULT_ROUTE } from "../routing/model-routes";
import type { AgentToolExecutionContext, ElicitationAnswer, ElicitationRequest, ToolEffect } from "../tools/contract";
import type { AgentToolRegistry } from "../tools/registry";
import type { ApprovalDecision, ClientToolResult } from "../wire";
import type { AgentConfig } from "./agent-config";
import {
  type AgentExecuteResponse,
  publicToolCall,
  type StoredToolCall,
  type TurnError,
  type TurnOutcome,
} from "./agent-tool-call";
import { AgentToolExecutor } from "./agent-tool-executor";
import { appendBatchResults } from "./conversation";
import { correctionRequest } from "./json-tool-call";
import type { CallReservation, ModelCallBudget, TurnMeter } from "./model-call-budget";
import {
  buildModelRequest,
  type ClientToolSet,
  type ModelRequest,
  type ModelStepDeps,
  prefetchModelRequest,
  type RemoteToolSource,
  readModelStep,
  registryForMode,
  withStepCache,
} from "./model-step";
import { finishTurn, pauseTurn, type TurnEndingDeps } from "./turn-ending";
import type { TurnEvents } from "./turn-events";
import { refusalForCalls, refusalUnless } from "./turn-gate";
import { formatDuration, type TurnLimit, turnLimitError } from "./turn-limits";
import type { SessionStatus, TurnState, TurnStore } from "./turn-store";

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
  now?: () => number;
}

/** One request's share of a turn: when its working time started, its cancel signal, a model call paid for. */
interface Run {
  since: number;
  signal?: AbortSignal;
  /** The first model call of this run was already counted against the key (a new message checks first). */
  prepaid: boolean;
  /** The first model call's reservation, taken before the message was stored. */
  reservation?: CallReservation;
}

const MALFORMED_LOG_CHARS = 2_000;
const CANCELLED: TurnError = { code: "cancelled", message: "The turn was cancelled." };

/**
 * One task later: a tool call started just before has by then sent its request (its microtasks have run), so
 * a write made now does not hold that request back. A call whose request needs more I/O first (connecting)
 * merely waits for the write as before.
 */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export class AgentReasoner {
  /** The executor of the object's built-in tools; a request whose mode offers remote tools gets its own. */
  private readonly executor: AgentToolExecutor;
  private readonly now: () => number;

  private readonly stepDeps: ModelStepDeps;

  constructor(private readonly deps: AgentReasonerDeps) {
    this.executor = new AgentToolExecutor(deps.registry, deps.logger);
    this.stepDeps = withStepCache(deps);
    this.now = deps.now ?? Date.now;
  }

  /**
   * One turn at a time: a running turn, or one waiting on approvals or client results, refuses a new
   * message. So does a key past its limit of model calls, before anything is stored.
   */
  async startTurn(content: string, signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const busy = this.refuseUnless("idle");
    if (busy) return busy;
    // The key's limit and the org's budget are asked while the mode and the base prompt are read (the first call
    // needs them); a refusal comes before anything is stored.
    const prefetched = prefetchModelRequest(this.stepDeps);
    const [grant, admission] = await Promise.all([
      this.deps.budget?.take(),
      // A mode that cannot be read is priced as `default`: the turn then fails on it, stored, like every failed turn.
      this.deps.meter?.reserve(
        this.firstCallChars(content),
        prefetched.then(() => this.modeRoute()).catch(() => DEFAULT_ROUTE),
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
    const now = this.now();
    const turn: TurnState = {
      turnId: crypto.randomUUID(),
      startedAt: now,
      workedMs: 0,
      iterations: 0,
      parseFailures: 0,
      batch: null,
    };
    this.deps.store.saveTurn("running", turn);
    this.deps.store.appendMessage({ turnId: turn.turnId, role: "user", content, kind: "message" });
    this.deps.events?.turnStarted?.(turn.turnId);
    return {
      ok: true,
      value: await this.continueTurn(turn, {
        since: now,
        signal,
        prepaid: grant !== undefined,
        ...(admission?.ok ? { reservation: admission.reservation } : {}),
      }),
    };
  }

  /** A generous size of the first request of a turn: the message, the history it may carry, the prompt. */
  private firstCallChars(content: string): number {
    const { config, store } = this.deps;
    const history = store.messages().reduce((sum, m) => sum + (m.content?.length ?? 0), 0);
    return content.length + Math.min(history, config.historyBudgetTokens * 4) + config.promptBudgetTokens * 4;
  }

  /** The route the session's mode takes (the default mode's when the mode is gone). */
  private async modeRoute(): Promise<string> {
    const { catalog, store } = this.stepDeps;
    const mode = (await catalog.getMode(store.identity().mode)) ?? (await catalog.getDefaultMode());
    return mode.modelRoute;
  }

  async applyApprovals(decisions: ApprovalDecision[], signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const ids = decisions.map((d) => d.toolCallId);
    const refused =
      this.refuseExpired(ids) ?? this.refuseUnless("awaiting_approval") ?? this.refuseUnknown(ids, "awaiting_approval");
    if (refused) return refused;
    const turn = this.currentTurn();
    const run = this.resume(turn, signal);
    const executor = this.executorFor(await registryForMode(this.stepDeps));
    for (const decision of decisions) {
      const call = this.findCall(turn, decision.toolCallId);
      if (!decision.approved) {
        const why = decision.reason?.trim()
          ? `Tool call denied by the user: ${decision.reason.trim()}`
          : "Tool call denied by the user";
        this.settle({ ...call, approval: "denied", state: "settled", errorMessage: why });
      } else if (call.requiresClientExecution && call.wasExecuted) {
        // Its preflight ran before the person was asked: the prepared request goes to the client as it is.
        this.deps.store.saveToolCall({ ...call, approval: "approved", state: "awaiting_client" });
      } else {
        // Stored as approved before it runs: a call that takes long (or asks the user for input) is not
        // shown as waiting for approval meanwhile.
        const approved: StoredToolCall = { ...call, approval: "approved", state: "ready" };
        this.deps.store.saveToolCall(approved);
        this.recordCall(await this.runCall(turn, approved, run, executor));
      }
    }
    return { ok: true, value: await this.continueTurn(turn, run) };
  }

  /** Why results for these calls cannot be taken now (nothing waits, a call that does not, an expired pause), or null. */
  refusalForToolResults(ids: string[]): Refusal | null {
    return (
      this.refuseExpired(ids) ?? this.refuseUnless("awaiting_client") ?? this.refuseUnknown(ids, "awaiting_client")
    );
  }

  async applyToolResults(results: ClientToolResult[], signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const refused = this.refusalForToolResults(results.map((r) => r.toolCallId));
    if (refused) return refused;
    const turn = this.currentTurn();
    for (const result of results) {
      if (result.resultJson === undefined) continue;
      const problem = this.executor.checkClientResult(this.findCall(turn, result.toolCallId), result.resultJson);
      if (problem) return refuse("invalid_tool_result", `Invalid tool result: ${problem}.`, { param: "results" });
    }
    const run = this.resume(turn, signal);
    for (const result of results) {
      const call = this.findCall(turn, result.toolCallId);
      this.settle(
        result.resultJson !== undefined
          ? { ...call, state: "settled", resultJson: result.resultJson, errorMessage: null }
          : {
              ...call,
              state: "settled",
              errorMessage: result.errorMessage ?? "The client could not execute the tool.",
            },
      );
    }
    return { ok: true, value: await this.continueTurn(turn, run) };
  }

  /** Why a new message cannot start a turn now (busy, or waiting on approvals or client results), or null. */
  refusalToStart(): Refusal | null {
    return this.refuseUnless("idle");
  }

  /** Ends a turn that waits on approvals or client results; a running turn is cancelled through its signal. */
  cancelPausedTurn(): Outcome<AgentExecuteResponse> {
    const status = this.deps.store.status();
    const turn = this.deps.store.turn();
    if ((status !== "awaiting_approval" && status !== "awaiting_client") || !turn) {
      return refuse("nothing_to_cancel", "The session has no turn waiting to be cancelled.");
    }
    return { ok: true, value: this.finish(turn, "cancelled", "", { error: CANCELLED }) };
  }

  /**
   * A turn whose action threw (an unexpected failure, logged by the caller with its stack) is ended as
   * failed, so the session takes messages again instead of staying `running`.
   */
  failBrokenTurn(): void {
    const turn = this.deps.store.turn();
    if (this.deps.store.status() !== "running" || !turn) return;
    this.finish(turn, "failed", "", {
      error: { code: "internal_error", message: "The turn failed unexpectedly; send the message again." },
    });
  }

  /** An object that restarted mid-turn finds its turn `running` with nobody driving it: end it cleanly. */
  recoverInterruptedTurn(): void {
    const turn = this.deps.store.turn();
    if (this.deps.store.status() !== "running" || !turn) return;
    this.finish(turn, "failed", "", {
      error: {
        code: "turn_interrupted",
        message: "The turn was interrupted when the session restarted; send the message again.",
      },
    });
  }

  /** When a paused turn stops waiting (its pause expires), or null when the session has no paused turn. */
  pauseExpiresAt(): number | null {
    const status = this.deps.store.status();
    const turn = this.deps.store.turn();
    if ((status !== "awaiting_approval" && status !== "awaiting_client") || !turn) return null;
    return turn.pauseExpiresAt ?? turn.startedAt + this.deps.config.pauseTtlMs;
  }

  /**
   * Ends a paused turn whose pause has expired: its pending calls are settled unexecuted, the turn is
   * recorded as failed with `pause_expired`, and the session takes a new message. Null when nothing expired.
   */
  expirePausedTurn(): AgentExecuteResponse | null {
    const expiresAt = this.pauseExpiresAt();
    const turn = this.deps.store.turn();
    if (expiresAt === null || !turn || expiresAt > this.now()) return null;
    const waited = expiresAt - (turn.pausedAt ?? turn.startedAt);
    return this.limitReached(turn, "pause_expired", waited);
  }

  private refuseUnless(expected: SessionStatus): Refusal | null {
    return refusalUnless(this.deps.store.status(), expected);
  }

  private refuseUnknown(ids: string[], state: StoredToolCall["state"]): Refusal | null {
    return refusalForCalls(this.deps.store.toolCalls(this.currentTurn().turnId), ids, state);
  }

  /** Answers for calls of a turn whose pause expired say so, rather than that nothing is pending. */
  private refuseExpired(ids: string[]): Refusal | null {
    if (this.deps.store.status() !== "idle") return null;
    const last = this.deps.store.lastTurnOutcome();
    if (last?.error?.code !== "pause_expired") return null;
    const expired = new Set(this.deps.store.toolCalls(last.turnId).map((c) => c.id));
    if (!ids.some((id) => expired.has(id))) return null;
    return refuse(
      "pause_expired",
      `The turn that asked for these tool calls expired at ${last.endedAt} and nothing more of it was executed; send a new message to continue.`,
    );
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
    this.deps.store.saveTurn("running", turn);
    return { since: this.now(), signal, prepaid: false };
  }

  /** Working time: what earlier runs of the turn worked, plus this run so far. Pauses are not counted. */
  private worked(turn: TurnState, run: Run): number {
    return (turn.workedMs ?? 0) + (this.now() - run.since);
  }

  private settle(call: StoredToolCall): void {
    this.deps.store.saveToolCall(call);
    this.deps.events?.toolCallCompleted?.(publicToolCall(call));
  }

  /**
   * The loop: settle the open batch (pause, or deliver its results), check the limits, call the model, and
   * act on what it said; until an answer, a pause or a limit ends this run.
   */
  private async continueTurn(turn: TurnState, run: Run): Promise<AgentExecuteResponse> {
    try {
      for (;;) {
        const settled = this.settleOpenBatch(turn, run);
        if (settled) return settled;
        const stopped = await this.checkLimits(turn, run);
        if (stopped) return stopped;
        const request = await buildModelRequest(this.stepDeps, turn);
        const called = await this.callModel(turn, run, request);
        if ("ended" in called) return called.ended;
        const ended = await this.actOnResponse(turn, run, request, called.response, called.route);
        if (ended) return ended;
      }
    } finally {
      // A run that ended before its first model call gives that call's reservation back.
      run.reservation?.settle(null);
    }
  }

  /** The open batch: still waiting (the turn pauses), or settled (its results go to the model, or it terminates). */
  private settleOpenBatch(turn: TurnState, run: Run): AgentExecuteResponse | null {
    if (turn.batch === null) return null;
    const batch = this.deps.store.toolCalls(turn.turnId).filter((c) => c.batch === turn.batch);
    if (batch.some((c) => c.state === "awaiting_approval")) return this.pause(turn, run, "awaiting_approval", batch);
    if (batch.some((c) => c.state === "awaiting_client")) return this.pause(turn, run, "awaiting_client", batch);
    this.deliver(turn, batch);
    turn.batch = null;
    const terminating = batch.find((c) => c.terminate);
    if (!terminating) return null;
    const text = terminating.resultJson ?? terminating.errorMessage ?? "";
    return this.finish(turn, "completed", text, { appendAnswer: true });
  }

  /** Before a model call: cancellation, the iteration and time limits, and the key's model call budget. */
  private async checkLimits(turn: TurnState, run: Run): Promise<AgentExecuteResponse | null> {
    const { config } = this.deps;
    if (run.signal?.aborted) return this.finish(turn, "cancelled", "", { error: CANCELLED });
    if (turn.iterations >= config.maxIterations) return this.limitReached(turn, "iteration_limit", turn.iterations);
    const worked = this.worked(turn, run);
    if (worked >= config.turnTimeoutMs) return this.limitReached(turn, "turn_timeout", worked);
    if (run.prepaid) {
      run.prepaid = false;
      return null;
    }
    const grant = await this.deps.budget?.take();
    if (grant && !grant.ok) return this.limitReached(turn, "rate_limit_exceeded", grant.retryAfterSeconds);
    return null;
  }

  /**
   * One model call on the mode's route (or its fallbacks), within what is left of the working time; a failure
   * ends the turn with its cause.
   */
  private async callModel(
    turn: TurnState,
    run: Run,
    request: ModelRequest,
  ): Promise<{ response: ChatResponse; route: ServedBy } | { ended: AgentExecuteResponse }> {
    const { config, events, meter } = this.deps;
    let reservation = run.reservation;
    delete run.reservation;
    if (!reservation && meter) {
      const sent = request.forFormat("native");
      const admission = await meter.reserve(
        JSON.stringify(sent.messages).length + JSON.stringify(sent.tools ?? []).length,
        request.route,
      );
      if (!admission.ok) {
        return { ended: this.limitReached(turn, "budget_exceeded", admission.retryAfterSeconds, admission.message) };
      }
      reservation = admission.reservation;
    }
    const timer = deadline(config.turnTimeoutMs - this.worked(turn, run), run.signal);
    try {
      const { response, route } = await this.deps.router.complete(request.route, {
        request: async (format) => request.forFormat(format),
        signal: timer.signal,
        ...(events?.assistantDelta ? { onTextDelta: (t: string) => events.assistantDelta?.(t) } : {}),
        ...(events?.assistantRestarted ? { onRestart: (r) => events.assistantRestarted?.(r) } : {}),
      });
      turn.iterations++;
      turn.stepFormat = route.toolFormat;
      reservation?.settle({
        route: route.name,
        usage: response.usage ?? null,
        answerChars:
          (response.content?.length ?? 0) + response.toolCalls.reduce((sum, c) => sum + c.arguments.length, 0),
      });
      if (response.usage) {
        const before = turn.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
        turn.usage = {
          promptTokens: before.promptTokens + response.usage.promptTokens,
          completionTokens: before.completionTokens + response.usage.completionTokens,
          totalTokens: before.totalTokens + response.usage.totalTokens,
        };
      }
      return { response, route };
    } catch (error) {
      reservation?.settle(null);
      if (run.signal?.aborted) return { ended: this.finish(turn, "cancelled", "", { error: CANCELLED }) };
      const worked = this.worked(turn, run);
      if (worked >= config.turnTimeoutMs) return { ended: this.limitReached(turn, "turn_timeout", worked) };
      return { ended: this.modelFailed(turn, error) };
    } finally {
      timer.clear();
    }
  }

  /** What the model said: a malformed JSON call (corrected, or the limit), the answer, or tool calls to run. */
  private async actOnResponse(
    turn: TurnState,
    run: Run,
    request: ModelRequest,
    response: ChatResponse,
    route: ServedBy,
  ): Promise<AgentExecuteResponse | null> {
    const { store } = this.deps;
    const usedIds = new Set(store.toolCalls(turn.turnId).map((c) => c.id));
    const step = readModelStep(response, turn, route.toolFormat, usedIds);
    if (step.kind === "malformed") return this.correctMalformed(turn, response, step.problem);
    turn.parseFailures = 0;
    if (step.kind === "answer") {
      store.appendMessage({ turnId: turn.turnId, role: "assistant", content: step.text, kind: "answer" });
      return this.finish(turn, "completed", step.text);
    }
    turn.text = step.text;
    store.appendMessage({
      turnId: turn.turnId,
      role: "assistant",
      content: response.content,
      ...(route.toolFormat === "native" ? { toolCalls: step.calls } : {}),
      kind: "message",
    });
    turn.batch = turn.iterations;
    store.saveTurn("running", turn);
    await this.planBatch(turn, request, request.inFormat(route.toolFormat).offered, step.calls, step.terminate, run);
    return null;
  }

  /** A malformed JSON-format call: logged, sent back with a correction request, and counted toward the limit. */
  private correctMalformed(turn: TurnState, response: ChatResponse, problem: string): AgentExecuteResponse | null {
    const { config, store } = this.deps;
    turn.parseFailures++;
    this.deps.logger.addCustomEvent("Warning", "[AgentReasoner_MalformedToolCall]", problem, [
      ["SessionId", store.identity().sessionId],
      ["Output", (response.content ?? "").slice(0, MALFORMED_LOG_CHARS)],
    ]);
    store.appendMessage({ turnId: turn.turnId, role: "assistant", content: response.content, kind: "message" });
    store.appendMessage({ turnId: turn.turnId, role: "user", content: correctionRequest(problem), kind: "correction" });
    if (turn.parseFailures >= config.maxParseFailures) {
      return this.limitReached(turn, "malformed_tool_calls", turn.parseFailures, problem);
    }
    store.saveTurn("running", turn);
    return null;
  }

  /**
   * Stores the response's calls and runs those that can run. A call that waits for a person is checked
   * first (a client-final tool's preflight, a server tool's arguments), so a call that would be refused
   * anyway never reaches the approval dialog.
   */
  private async planBatch(
    turn: TurnState,
    request: ModelRequest,
    offered: ReadonlySet<string>,
    calls: { id: string; name: string; arguments: string }[],
    terminate: boolean,
    run: Run,
  ): Promise<void> {
    const { store } = this.deps;
    const executor = this.executorFor(request.registry);
    const planned = calls.map((call, position) =>
      executor.plan(call, {
        turnId: turn.turnId,
        batch: turn.iterations,
        position,
        terminate,
        offered,
        approvalRequired: request.approvalRequired,
      }),
    );
    for (const call of planned) {
      store.saveToolCall(call);
      this.deps.events?.toolCallStarted?.(publicToolCall(call));
      if (call.state === "settled") this.deps.events?.toolCallCompleted?.(publicToolCall(call));
    }
    for (const call of planned) {
      if (call.state !== "awaiting_approval") continue;
      const checked = await executor.checkBeforeApproval(call, this.toolContext(), run.signal);
      if (checked.state === "settled") this.settle(checked);
      else store.saveToolCall(checked);
    }
    await this.runReadyCalls(turn, planned, run, executor);
  }

  /**
   * Runs a batch's ready calls one after another, each result stored and framed as the next call goes out:
   * a write holds every later outgoing request at the object's output gate until it is committed, so storing
   * a result first would make each call wait for the previous one's commit. The result still reaches storage
   * before anything is sent on its strength (the model's next request, a reply), and before the turn goes on.
   */
  private async runReadyCalls(
    turn: TurnState,
    planned: StoredToolCall[],
    run: Run,
    executor: AgentToolExecutor,
  ): Promise<void> {
    let unrecorded: StoredToolCall | null = null;
    for (const call of planned) {
      if (call.state !== "ready") continue;
      const running = this.runCall(turn, call, run, executor);
      if (unrecorded) {
        // Settled either way below; this only keeps a rejection during the wait from counting as unhandled.
        running.catch(() => undefined);
        await nextTask();
        this.recordCall(unrecorded);
      }
      unrecorded = await running;
    }
    if (unrecorded) this.recordCall(unrecorded);
  }

  /** A call that has run: stored, and shown to the session's clients when it is settled. */
  private recordCall(done: StoredToolCall): void {
    this.deps.store.saveToolCall(done);
    if (done.state === "settled") this.deps.events?.toolCallCompleted?.(publicToolCall(done));
  }

  /** A failed model call ends the turn with a fixed text for its cause; what the upstream said goes to the log. */
  private modelFailed(turn: TurnState, error: unknown): AgentExecuteResponse {
    const pairs: [string, string][] = [
      ["SessionId", this.deps.store.identity().sessionId],
      ["TurnId", turn.turnId],
    ];
    if (error instanceof ModelError) {
      this.deps.logger.addCustomEvent("Error", "[AgentReasoner_ModelCall]", error.detail, [
        ...pairs,
        ["Code", error.code],
        ["Status", String(error.status ?? "")],
      ]);
      return this.finish(turn, "failed", "", { error: { code: error.code, message: error.message } });
    }
    this.deps.logger.addException("[AgentReasoner_ModelCall__Exception]", error, pairs);
    return this.finish(turn, "failed", "", {
      error: { code: "model_error", message: "The model call failed unexpectedly." },
    });
  }

  /** A limit stopped the turn: logged as a warning with its figure (the design document), then the turn ends. */
  private limitReached(turn: TurnState, limit: TurnLimit, figure: number, detail?: string): AgentExecuteResponse {
    const error = turnLimitError(limit, figure, this.deps.config, detail);
    this.deps.logger.addCustomEvent("Warning", "[AgentReasoner_TurnLimit]", error.message, [
      ["SessionId", this.deps.store.identity().sessionId],
      ["TurnId", turn.turnId],
      ["Limit", limit],
      ["Figure", limit === "turn_timeout" || limit === "pause_expired" ? formatDuration(figure) : String(figure)],
    ]);
    return this.finish(turn, "failed", "", { error });
  }

  private executorFor(registry: AgentToolRegistry): AgentToolExecutor {
    return registry === this.deps.registry ? this.executor : new AgentToolExecutor(registry, this.deps.logger);
  }

  /**
   * Who and where a tool runs for. With a run, the tool may ask the user for input: the turn waits in place,
   * and the wait is not working time.
   */
  private toolContext(run?: Run, toolCallId?: string): AgentToolExecutionContext {
    const identity = this.deps.store.identity();
    const context: AgentToolExecutionContext = {
      sessionId: identity.sessionId,
      conversationId: identity.sessionId,
      org: identity.org,
      user: identity.user,
      mode: identity.mode,
      logger: this.deps.logger,
    };
    const elicit = this.deps.elicit;
    if (!run || !toolCallId || !elicit) return context;
    return {
      ...context,
      toolCallId,
      elicit: async (request, signal) => {
        const asked = this.now();
        try {
          return await elicit({ ...request, toolCallId }, signal);
        } finally {
          run.since += this.now() - asked;
        }
      },
    };
  }

  /**
   * Runs a ready call (server-final, or a client-final preflight) and applies what its success did; the caller
   * records the call.
   */
  private async runCall(
    turn: TurnState,
    call: StoredToolCall,
    run: Run,
    executor: AgentToolExecutor = this.executor,
  ): Promise<StoredToolCall> {
    const context = this.toolContext(run, call.id);
    const done = await executor.executeServerTool(call, context, run.signal);
    for (const effect of done.effects ?? []) await this.applyEffect(turn, done, effect, context.mode);
    return done;
  }

  /**
   * A tool's typed effect (the loop names no tool). A mode change: the session's mode is already written (by
   * the tool, TUL-007 §3.5); a branch starts the new session, whose id the model is told with the result.
   */
  private async applyEffect(turn: TurnState, call: StoredToolCall, effect: ToolEffect, from: string): Promise<void> {
    if (effect.type !== "mode_changed") return;
    const branchSessionId = effect.branch ? await this.deps.createBranchSession(effect.to) : undefined;
    if (branchSessionId) {
      turn.branchSessionId = branchSessionId;
      call.note = `A new session ${branchSessionId} was started in that mode for the new work.`;
    }
    this.deps.store.saveTurn("running", turn);
    this.deps.events?.modeChanged?.({
      from,
      to: effect.to,
      reason: effect.reason,
      ...(branchSessionId ? { branchSessionId } : {}),
    });
  }

  private deliver(turn: TurnState, batch: StoredToolCall[]): void {
    appendBatchResults(this.deps.store, turn, batch, this.deps.config);
  }

  /** The turn waits: its working time so far is kept, and its pause expires after `pauseTtlMs`. */
  private pause(
    turn: TurnState,
    run: Run,
    status: "awaiting_approval" | "awaiting_client",
    batch: StoredToolCall[],
  ): AgentExecuteResponse {
    const now = this.now();
    turn.workedMs = this.worked(turn, run);
    turn.pausedAt = now;
    turn.pauseExpiresAt = now + this.deps.config.pauseTtlMs;
    return pauseTurn(this.endingDeps(), turn, status, batch);
  }

  private finish(
    turn: TurnState,
    outcome: TurnOutcome,
    text: string,
    options: { error?: TurnError; appendAnswer?: boolean } = {},
  ): AgentExecuteResponse {
    return finishTurn(this.endingDeps(), turn, outcome, text, options);
  }

  private endingDeps(): TurnEndingDeps {
    return { store: this.deps.store, config: this.deps.config, events: this.deps.events, now: this.now };
  }
}

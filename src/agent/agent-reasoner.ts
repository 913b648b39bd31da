// AgentReasoner: the agent loop (AGN-005 §6, the design document's Decision 2). Plain TypeScript over a
// TurnStore, so it runs inside the session object and in unit tests alike.
import { type ChatModel, type ChatResponse, ModelError } from "../llm/chat-model";
import { deadline } from "../llm/deadline";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { AdminLogger } from "../observability/admin-logger";
import { ModeChangeTool } from "../tools/agent-change-mode";
import type { AgentToolRegistry } from "../tools/registry";
import type { AgentConfig } from "./agent-config";
import { type AgentExecuteResponse, publicToolCall, type StoredToolCall, type TurnOutcome } from "./agent-tool-call";
import { AgentToolExecutor } from "./agent-tool-executor";
import { appendBatchResults } from "./conversation";
import { correctionRequest } from "./json-tool-call";
import { buildModelRequest, type ModelStepDeps, readModelStep, withStepCache } from "./model-step";
import { finishTurn, pauseTurn, type TurnEndingDeps } from "./turn-ending";
import type { TurnEvents } from "./turn-events";
import {
  type ApprovalDecision,
  type ClientToolResult,
  type Outcome,
  type Refusal,
  refusalForCalls,
  refusalUnless,
  refuse,
} from "./turn-gate";
import type { SessionStatus, TurnState, TurnStore } from "./turn-store";

export interface AgentReasonerDeps {
  store: TurnStore;
  model: ChatModel;
  registry: AgentToolRegistry;
  catalog: AgentModeCatalogService;
  basePrompt: () => Promise<string>;
  config: AgentConfig;
  logger: AdminLogger;
  /** Creates a session in `mode` linked to this one; returns its id. */
  createBranchSession: (mode: string) => Promise<string>;
  events?: TurnEvents;
  now?: () => number;
}

const MALFORMED_LOG_CHARS = 2_000;

export class AgentReasoner {
  private readonly executor: AgentToolExecutor;
  private readonly now: () => number;

  private readonly stepDeps: ModelStepDeps;

  constructor(private readonly deps: AgentReasonerDeps) {
    this.executor = new AgentToolExecutor(deps.registry, deps.logger);
    this.stepDeps = withStepCache(deps);
    this.now = deps.now ?? Date.now;
  }

  /** One turn at a time: a running turn, or one waiting on approvals or client results, refuses a new message. */
  async startTurn(content: string, signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const busy = this.refuseUnless("idle");
    if (busy) return busy;
    const turn: TurnState = {
      turnId: crypto.randomUUID(),
      startedAt: this.now(),
      iterations: 0,
      parseFailures: 0,
      batch: null,
    };
    this.deps.store.saveTurn("running", turn);
    this.deps.store.appendMessage({ turnId: turn.turnId, role: "user", content, kind: "message" });
    this.deps.events?.turnStarted?.(turn.turnId);
    return { ok: true, value: await this.continueTurn(turn, signal) };
  }

  async applyApprovals(decisions: ApprovalDecision[], signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const refused =
      this.refuseUnless("awaiting_approval") ??
      this.refuseUnknown(
        decisions.map((d) => d.toolCallId),
        "awaiting_approval",
      );
    if (refused) return refused;
    const turn = this.currentTurn();
    this.deps.store.saveTurn("running", turn);
    for (const decision of decisions) {
      const call = this.findCall(turn, decision.toolCallId);
      if (decision.approved) {
        await this.runCall(turn, { ...call, approval: "approved", state: "ready" }, signal);
      } else {
        const why = decision.reason?.trim()
          ? `Tool call denied by the user: ${decision.reason.trim()}`
          : "Tool call denied by the user";
        this.settle({ ...call, approval: "denied", state: "settled", errorMessage: why });
      }
    }
    return { ok: true, value: await this.continueTurn(turn, signal) };
  }

  async applyToolResults(results: ClientToolResult[], signal?: AbortSignal): Promise<Outcome<AgentExecuteResponse>> {
    const refused =
      this.refuseUnless("awaiting_client") ??
      this.refuseUnknown(
        results.map((r) => r.toolCallId),
        "awaiting_client",
      );
    if (refused) return refused;
    const turn = this.currentTurn();
    for (const result of results) {
      if (result.resultJson === undefined) continue;
      const problem = this.executor.checkClientResult(this.findCall(turn, result.toolCallId), result.resultJson);
      if (problem) return refuse(400, "invalid_tool_result", `Invalid tool result: ${problem}.`, "results");
    }
    this.deps.store.saveTurn("running", turn);
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
    return { ok: true, value: await this.continueTurn(turn, signal) };
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
      return refuse(409, "nothing_to_cancel", "The session has no turn waiting to be cancelled.");
    }
    return {
      ok: true,
      value: this.finish(turn, "cancelled", "", { code: "cancelled", message: "The turn was cancelled." }),
    };
  }

  /** An object that restarted mid-turn finds its turn `running` with nobody driving it: end it cleanly. */
  recoverInterruptedTurn(): void {
    const turn = this.deps.store.turn();
    if (this.deps.store.status() !== "running" || !turn) return;
    this.finish(turn, "failed", "", {
      code: "turn_interrupted",
      message: "The turn was interrupted when the session restarted; send the message again.",
    });
  }

  private refuseUnless(expected: SessionStatus): Refusal | null {
    return refusalUnless(this.deps.store.status(), expected);
  }

  private refuseUnknown(ids: string[], state: StoredToolCall["state"]): Refusal | null {
    return refusalForCalls(this.deps.store.toolCalls(this.currentTurn().turnId), ids, state);
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

  private settle(call: StoredToolCall): void {
    this.deps.store.saveToolCall(call);
    this.deps.events?.toolCallCompleted?.(publicToolCall(call));
  }

  private async continueTurn(turn: TurnState, signal?: AbortSignal): Promise<AgentExecuteResponse> {
    const { config, store } = this.deps;
    for (;;) {
      if (turn.batch !== null) {
        const batch = store.toolCalls(turn.turnId).filter((c) => c.batch === turn.batch);
        if (batch.some((c) => c.state === "awaiting_approval")) return this.pause(turn, "awaiting_approval", batch);
        if (batch.some((c) => c.state === "awaiting_client")) return this.pause(turn, "awaiting_client", batch);
        this.deliver(turn, batch);
        turn.batch = null;
        const terminating = batch.find((c) => c.terminate);
        if (terminating)
          return this.finish(
            turn,
            "completed",
            terminating.resultJson ?? terminating.errorMessage ?? "",
            undefined,
            true,
          );
      }
      if (signal?.aborted)
        return this.finish(turn, "cancelled", "", { code: "cancelled", message: "The turn was cancelled." });
      if (turn.iterations >= config.maxIterations) {
        return this.finish(turn, "failed", "", {
          code: "iteration_limit",
          message: `The turn stopped at the iteration limit: ${config.maxIterations} model calls without a final answer.`,
        });
      }
      const remaining = config.turnTimeoutMs - (this.now() - turn.startedAt);
      if (remaining <= 0) return this.finish(turn, "failed", "", this.timeLimitError());

      const request = await buildModelRequest(this.stepDeps, turn);
      let response: ChatResponse;
      const timer = deadline(remaining, signal);
      try {
        response = await this.deps.model.complete({
          messages: request.messages,
          ...(config.toolFormat === "native" ? { tools: request.chatTools } : {}),
          signal: timer.signal,
          ...(this.deps.events?.assistantDelta
            ? { onTextDelta: (t: string) => this.deps.events?.assistantDelta?.(t) }
            : {}),
        });
      } catch (error) {
        if (signal?.aborted)
          return this.finish(turn, "cancelled", "", { code: "cancelled", message: "The turn was cancelled." });
        if (this.now() - turn.startedAt >= config.turnTimeoutMs)
          return this.finish(turn, "failed", "", this.timeLimitError());
        if (!(error instanceof ModelError))
          this.deps.logger.addException("[AgentReasoner_ModelCall__Exception]", error);
        const message = error instanceof ModelError ? error.message : "The model call failed unexpectedly.";
        return this.finish(turn, "failed", "", { code: "model_error", message });
      } finally {
        timer.clear();
      }
      turn.iterations++;

      const calls = readModelStep(response, turn, config.toolFormat);
      if (calls.kind === "malformed") {
        turn.parseFailures++;
        this.deps.logger.addCustomEvent("Warning", "[AgentReasoner_MalformedToolCall]", calls.problem, [
          ["SessionId", store.identity().sessionId],
          ["Output", (response.content ?? "").slice(0, MALFORMED_LOG_CHARS)],
        ]);
        store.appendMessage({ turnId: turn.turnId, role: "assistant", content: response.content, kind: "message" });
        store.appendMessage({
          turnId: turn.turnId,
          role: "user",
          content: correctionRequest(calls.problem),
          kind: "correction",
        });
        if (turn.parseFailures >= config.maxParseFailures) {
          return this.finish(turn, "failed", "", {
            code: "malformed_tool_calls",
            message: `The model sent ${turn.parseFailures} malformed tool calls in a row (last problem: ${calls.problem}); the turn was stopped.`,
          });
        }
        store.saveTurn("running", turn);
        continue;
      }
      turn.parseFailures = 0;
      if (calls.kind === "answer") {
        store.appendMessage({ turnId: turn.turnId, role: "assistant", content: calls.text, kind: "answer" });
        return this.finish(turn, "completed", calls.text);
      }
      turn.text = calls.text;
      store.appendMessage({
        turnId: turn.turnId,
        role: "assistant",
        content: response.content,
        ...(config.toolFormat === "native" ? { toolCalls: calls.calls } : {}),
        kind: "message",
      });
      turn.batch = turn.iterations;
      store.saveTurn("running", turn);
      const planned = calls.calls.map((call, position) =>
        this.executor.plan(call, {
          turnId: turn.turnId,
          batch: turn.iterations,
          position,
          terminate: calls.terminate,
          offered: request.offered,
          approvalRequired: request.approvalRequired,
        }),
      );
      for (const call of planned) {
        store.saveToolCall(call);
        this.deps.events?.toolCallStarted?.(publicToolCall(call));
        if (call.state === "settled") this.deps.events?.toolCallCompleted?.(publicToolCall(call));
      }
      for (const call of planned) if (call.state === "ready") await this.runCall(turn, call, signal);
    }
  }

  private timeLimitError() {
    const seconds = Math.round(this.deps.config.turnTimeoutMs / 100) / 10;
    return {
      code: "turn_timeout",
      message: `The turn stopped at the time limit: ${seconds} s without a final answer.`,
    };
  }

  /** Runs a ready call (server-final, or a client-final preflight) and reacts to a mode change. */
  private async runCall(turn: TurnState, call: StoredToolCall, signal?: AbortSignal): Promise<void> {
    const identity = this.deps.store.identity();
    const context = {
      sessionId: identity.sessionId,
      conversationId: identity.sessionId,
      org: identity.org,
      user: identity.user,
      mode: identity.mode,
      logger: this.deps.logger,
    };
    const done = await this.executor.executeServerTool(call, context, signal);
    this.deps.store.saveToolCall(done);
    if (done.state === "settled") this.deps.events?.toolCallCompleted?.(publicToolCall(done));
    if (done.name !== ModeChangeTool.ToolName || !done.resultJson || done.errorMessage) return;
    const result = JSON.parse(done.resultJson) as { mode: string; branch: boolean; reason: string };
    const branchSessionId = result.branch ? await this.deps.createBranchSession(result.mode) : undefined;
    if (branchSessionId) turn.branchSessionId = branchSessionId;
    this.deps.store.saveTurn("running", turn);
    this.deps.events?.modeChanged?.({
      from: identity.mode,
      to: result.mode,
      reason: result.reason,
      ...(branchSessionId ? { branchSessionId } : {}),
    });
  }

  private deliver(turn: TurnState, batch: StoredToolCall[]): void {
    appendBatchResults(this.deps.store, turn, batch, this.deps.config);
  }

  private pause(
    turn: TurnState,
    status: "awaiting_approval" | "awaiting_client",
    batch: StoredToolCall[],
  ): AgentExecuteResponse {
    return pauseTurn(this.endingDeps(), turn, status, batch);
  }

  private finish(
    turn: TurnState,
    outcome: TurnOutcome,
    text: string,
    error?: { code: string; message: string },
    appendAnswer = false,
  ): AgentExecuteResponse {
    return finishTurn(this.endingDeps(), turn, outcome, text, error, appendAnswer);
  }

  private endingDeps(): TurnEndingDeps {
    return { store: this.deps.store, config: this.deps.config, events: this.deps.events, now: this.now };
  }
}

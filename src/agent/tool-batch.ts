// A turn's tool calls, one model response (a batch) at a time: stored as planned, checked before a person is asked,
// run (server tools, and client tools' preflights), their typed effects applied, and the batch settled: it waits
// (the turn pauses), or its results go to the model, or a terminating call's result is the answer.
import type { ModelToolCall } from "../llm/chat-model";
import type { AdminLogger } from "../observability/admin-logger";
import type { TurnObserver } from "../observability/turn-observer";
import type { AgentToolExecutionContext, ToolEffect } from "../tools/contract";
import type { ElicitationRequest } from "../tools/elicitation";
import type { AgentToolRegistry } from "../tools/registry";
import type { ElicitationAnswer } from "../wire/elicitation";
import type { AgentConfig } from "./agent-config";
import { publicToolCall, type StoredToolCall } from "./agent-tool-call";
import { AgentToolExecutor } from "./agent-tool-executor";
import { appendBatchResults } from "./conversation";
import { blockedCallText, withheldResultText } from "./guardrail-texts";
import { NEXT_MODEL_CALL, type NextStep } from "./next-step";
import type { TurnEvents } from "./turn-events";
import type { TurnGuardrails } from "./turn-guardrails";
import type { TurnState, TurnStore } from "./turn-store";

export interface ToolBatchDeps {
  store: TurnStore;
  registry: AgentToolRegistry;
  config: Pick<AgentConfig, "toolResultBudgetChars">;
  logger: AdminLogger;
  events?: TurnEvents | undefined;
  /** Creates a session in `mode` linked to this one; returns its id. */
  createBranchSession: (mode: string) => Promise<string>;
  /** Asks the user for input a tool needs mid-call; absent, no one can answer. */
  elicit?:
    | ((request: ElicitationRequest & { toolCallId: string }, signal: AbortSignal) => Promise<ElicitationAnswer>)
    | undefined;
  /** Hears each tool call and each wait for an MCP server's question (the turn's timeline, its trace). */
  observer?: TurnObserver | undefined;
  /** The turn's guardrails on a call's arguments (before it runs) and on its result (before the model reads it). */
  guard?: TurnGuardrails | undefined;
  now: () => number;
}

/** The part of a run (next-step.ts) the batch needs: its cancel signal, and when its working time started. */
export interface BatchRun {
  since: number;
  signal?: AbortSignal | undefined;
}

/**
 * One task later: a tool call started just before has by then sent its request (its microtasks have run), so
 * a write made now does not hold that request back. A call whose request needs more I/O first (connecting)
 * merely waits for the write as before.
 */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** The result the model sees for a call a restart cut off, whose tool is not safe to run twice. */
export const INTERRUPTED_CALL =
  "The call was interrupted when the session restarted, and it may or may not have taken effect. Check before calling it again.";

export class ToolBatch {
  /** The executor of the object's built-in tools; a request whose mode offers remote tools gets its own. */
  private readonly executor: AgentToolExecutor;

  constructor(private readonly deps: ToolBatchDeps) {
    this.executor = new AgentToolExecutor(deps.registry, deps.logger);
  }

  executorFor(registry: AgentToolRegistry): AgentToolExecutor {
    return registry === this.deps.registry ? this.executor : new AgentToolExecutor(registry, this.deps.logger);
  }

  /** Checks a client's result against its call (the tool's result schema, and the request it answers). */
  checkClientResult(call: StoredToolCall, resultJson: string): string | null {
    return this.executor.checkClientResult(call, resultJson);
  }

  /** The open batch: still waiting (the turn pauses), or settled (its results go to the model, or it terminates). */
  settleOpen(turn: TurnState): NextStep {
    if (turn.batch === null) return NEXT_MODEL_CALL;
    const batch = this.deps.store.toolCalls(turn.turnId).filter((c) => c.batch === turn.batch);
    if (batch.some((c) => c.state === "awaiting_approval")) return { type: "pause_for_approval", batch };
    if (batch.some((c) => c.state === "awaiting_client")) return { type: "pause_for_client", batch };
    appendBatchResults(this.deps.store, turn, batch, this.deps.config);
    turn.batch = null;
    const terminating = batch.find((c) => c.terminate);
    if (!terminating) return NEXT_MODEL_CALL;
    return { type: "final_answer", text: terminating.resultJson ?? terminating.errorMessage ?? "", appendAnswer: true };
  }

  /**
   * Stores the response's calls and runs those that can run. A call that waits for a person is checked first
   * (a client-final tool's preflight, a server tool's arguments), so a call that would be refused anyway never
   * reaches the approval dialog.
   */
  async plan(turn: TurnState, step: Extract<NextStep, { type: "run_tools" }>, run: BatchRun): Promise<void> {
    const { store, events } = this.deps;
    const executor = this.executorFor(step.request.registry);
    const checked = await this.checkCalls(step.calls);
    const planned = checked.map(({ call, blocked }, position) => {
      const stored = executor.plan(call, {
        turnId: turn.turnId,
        batch: turn.iterations,
        position,
        terminate: step.terminate,
        offered: step.offered,
        approvalRequired: step.request.approvalRequired,
      });
      // A blocked call never runs nor waits for a person: the model is told which guardrail refused it.
      if (!blocked || stored.state === "settled") return stored;
      return { ...stored, state: "settled" as const, approval: null, errorMessage: blockedCallText(blocked) };
    });
    for (const call of planned) {
      store.saveToolCall(call);
      events?.toolCallStarted?.(publicToolCall(call));
      if (call.state === "settled") events?.toolCallCompleted?.(publicToolCall(call));
    }
    for (const call of planned) {
      if (call.state !== "awaiting_approval") continue;
      const checked = await executor.checkBeforeApproval(call, this.toolContext(), run.signal);
      if (checked.state === "settled") this.settle(checked);
      else store.saveToolCall(checked);
    }
    await this.runReady(turn, planned, run, executor);
  }

  /**
   * The calls as they will run: a mask's placeholders in their arguments restored (a tool may use a value the model
   * only read as a placeholder), then checked by the `tool_call` guardrails (redacted, or blocked).
   */
  private async checkCalls(
    calls: readonly ModelToolCall[],
  ): Promise<{ call: ModelToolCall; blocked: Parameters<typeof blockedCallText>[0] | null }[]> {
    const { guard } = this.deps;
    if (!guard) return calls.map((call) => ({ call, blocked: null }));
    const out = [];
    for (const call of calls) {
      const checked = await guard.check("tool_call", guard.restore(call.arguments));
      out.push({ call: { ...call, arguments: checked.text }, blocked: checked.blocked });
    }
    return out;
  }

  /**
   * The open batch of a turn a restart cut off: its calls that were ready to run. Calls run one after another and
   * each result is stored once the next call has gone out (runReady), and an approved call runs alone, its
   * result stored at once (runApproved). So of the ready calls in order, only the first two may have started
   * (the first may have finished, unrecorded), and an approved one may have; the rest had not. A call that may
   * have started runs again only if its tool is repeatable; otherwise it is settled as interrupted, and the model
   * is told so. Then the batch's ready calls run as usual. Calls whose results were stored never run again.
   */
  async resumeOpen(turn: TurnState, run: BatchRun, executor: AgentToolExecutor): Promise<void> {
    if (turn.batch === null) return;
    const ready = this.deps.store
      .toolCalls(turn.turnId)
      .filter((c) => c.batch === turn.batch && c.state === "ready")
      .sort((a, b) => a.position - b.position);
    const planned = ready.filter((c) => c.approval !== "approved");
    const mayHaveStarted = [...ready.filter((c) => c.approval === "approved"), ...planned.slice(0, 2)];
    const again: StoredToolCall[] = [];
    for (const call of ready) {
      if (!mayHaveStarted.includes(call) || executor.isRepeatable(call)) again.push(call);
      else this.settle({ ...call, state: "settled", errorMessage: INTERRUPTED_CALL });
    }
    await this.runReady(turn, again, run, executor);
  }

  /** A call settled without running (denied, or answered by the client): stored and shown. */
  settle(call: StoredToolCall): void {
    this.deps.store.saveToolCall(call);
    this.deps.events?.toolCallCompleted?.(publicToolCall(call));
  }

  /** An approved call runs now (its arguments were checked before the person was asked). */
  async runApproved(turn: TurnState, call: StoredToolCall, run: BatchRun, executor: AgentToolExecutor): Promise<void> {
    // Stored as approved before it runs: a call that takes long (or asks the user for input) is not shown as
    // waiting for approval meanwhile.
    const approved: StoredToolCall = { ...call, approval: "approved", state: "ready" };
    this.deps.store.saveToolCall(approved);
    this.record(await this.runCall(turn, approved, run, executor));
  }

  /**
   * Runs a batch's ready calls one after another, each result stored and framed as the next call goes out: a
   * write holds every later outgoing request at the object's output gate until it is committed, so storing a
   * result first would make each call wait for the previous one's commit. The result still reaches storage before
   * anything is sent on its strength (the model's next request, a reply), and before the turn goes on.
   */
  private async runReady(
    turn: TurnState,
    planned: StoredToolCall[],
    run: BatchRun,
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
        this.record(unrecorded);
      }
      unrecorded = await running;
    }
    if (unrecorded) this.record(unrecorded);
  }

  /** A call that has run: stored, and shown to the session's clients when it is settled. */
  private record(done: StoredToolCall): void {
    this.deps.store.saveToolCall(done);
    if (done.state === "settled") this.deps.events?.toolCallCompleted?.(publicToolCall(done));
  }

  /** Runs a ready call (server-final, or a client-final preflight) and applies what its success did. */
  private async runCall(
    turn: TurnState,
    call: StoredToolCall,
    run: BatchRun,
    executor: AgentToolExecutor,
  ): Promise<StoredToolCall> {
    const context = this.toolContext(run, call.id, turn);
    const watch = this.deps.observer?.toolCall({
      id: call.id,
      name: call.name,
      ranOn: call.mcp ? "mcp" : "server",
      mcpServer: call.mcp?.server,
      arguments: call.argumentsJson,
    });
    const execute = () => executor.executeServerTool(call, context, run.signal);
    const done = await this.checkResult(watch ? await watch.within(execute) : await execute());
    watch?.end(done.errorMessage ? { error: done.errorMessage } : { result: done.resultJson });
    for (const effect of done.effects ?? []) await this.applyEffect(turn, done, effect, context.mode);
    return done;
  }

  /**
   * A result as the model will read it, checked by the `tool_result` guardrails: withheld (the model reads why),
   * redacted, or stored whole with a mask's values (the model reads their placeholders, see turn-guardrails.ts).
   */
  async checkResult(done: StoredToolCall): Promise<StoredToolCall> {
    const { guard } = this.deps;
    if (!guard || done.resultJson === null) return done;
    const checked = await guard.check("tool_result", done.resultJson);
    if (checked.blocked) return { ...done, resultJson: null, errorMessage: withheldResultText(checked.blocked) };
    return { ...done, resultJson: guard.restore(checked.text) };
  }

  /**
   * A tool's typed effect (the loop names no tool). A mode change: the session's mode is already written (by the
   * tool, TUL-007 §3.5); a branch starts the new session, whose id the model is told with the result.
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

  /**
   * Who and where a tool runs for. With a run, the tool may ask the user for input: the turn waits in place, and
   * the wait is not working time.
   */
  toolContext(run?: BatchRun, toolCallId?: string, turn?: TurnState): AgentToolExecutionContext {
    const identity = this.deps.store.identity();
    const context: AgentToolExecutionContext = {
      sessionId: identity.sessionId,
      conversationId: identity.sessionId,
      org: identity.org,
      user: identity.user,
      mode: identity.mode,
      logger: this.deps.logger,
      // What a tool's work is recorded against (a saved memory's source).
      ...(turn ? { turnId: turn.turnId } : {}),
    };
    const elicit = this.deps.elicit;
    if (!run || !toolCallId || !elicit) return context;
    return {
      ...context,
      toolCallId,
      elicit: async (request, signal) => {
        const asked = this.deps.now();
        const waiting = this.deps.observer?.wait("elicitation", { name: request.server, toolCallId });
        try {
          return await elicit({ ...request, toolCallId }, signal);
        } finally {
          waiting?.end();
          const waited = this.deps.now() - asked;
          run.since += waited;
          // Stored too: a run a restart cuts off later counts its working time from runSince.
          if (turn?.runSince !== undefined) {
            turn.runSince += waited;
            this.deps.store.saveTurn("running", turn);
          }
        }
      },
    };
  }
}

// How a turn pauses (for approvals or a client's results) and how it ends: open calls settled, results
// delivered, the outcome recorded, the session idle again, and the AgentExecuteResponse built. A limit that
// stops a turn is logged here too, with its figure, whoever finds it (the loop, or a pause that expired).
import type { AdminLogger } from "../observability/admin-logger";
import type { AgentExecuteResponse, TurnError, TurnOutcome } from "../wire/turn";
import type { AgentConfig } from "./agent-config";
import { publicToolCall, type StoredToolCall } from "./agent-tool-call";
import { appendBatchResults } from "./conversation";
import type { TurnEvents } from "./turn-events";
import { formatDuration, type TurnLimit, turnLimitError } from "./turn-limits";
import type { TurnState, TurnStore } from "./turn-store";

export interface TurnEndingDeps {
  store: TurnStore;
  config: Pick<AgentConfig, "toolResultBudgetChars" | "maxIterations" | "turnTimeoutMs" | "pauseTtlMs">;
  events?: TurnEvents | undefined;
  logger: AdminLogger;
  now: () => number;
}

export const CANCELLED: TurnError = { code: "cancelled", message: "The turn was cancelled." };

export function turnResponse(
  store: TurnStore,
  turn: TurnState,
  status: TurnOutcome,
  text: string,
  error?: TurnError,
): AgentExecuteResponse {
  const identity = store.identity();
  return {
    sessionId: identity.sessionId,
    status,
    mode: identity.mode,
    text,
    toolCalls: store.toolCalls(turn.turnId).map(publicToolCall),
    iterations: turn.iterations,
    ...(turn.branchSessionId ? { branchSessionId: turn.branchSessionId } : {}),
    ...(turn.usage ? { usage: turn.usage } : {}),
    ...(error ? { error } : {}),
  };
}

export function pauseTurn(
  deps: TurnEndingDeps,
  turn: TurnState,
  status: "awaiting_approval" | "awaiting_client",
  batch: StoredToolCall[],
): AgentExecuteResponse {
  deps.store.saveTurn(status, turn);
  const waiting = batch.filter((c) => c.state === status).map(publicToolCall);
  if (status === "awaiting_approval") deps.events?.approvalRequired?.(waiting);
  else deps.events?.clientToolRequired?.(waiting);
  return turnResponse(deps.store, turn, status, turn.text ?? "");
}

export function finishTurn(
  deps: TurnEndingDeps,
  turn: TurnState,
  outcome: TurnOutcome,
  text: string,
  options: { error?: TurnError; appendAnswer?: boolean } = {},
): AgentExecuteResponse {
  const { store, events } = deps;
  const { error, appendAnswer = false } = options;
  for (const call of store.toolCalls(turn.turnId).filter((c) => c.state !== "settled")) {
    const settled: StoredToolCall = {
      ...call,
      state: "settled",
      errorMessage: `The turn ended (${error?.code ?? outcome}) before this call was settled.`,
    };
    store.saveToolCall(settled);
    events?.toolCallCompleted?.(publicToolCall(settled));
  }
  if (turn.batch !== null) {
    appendBatchResults(
      store,
      turn,
      store.toolCalls(turn.turnId).filter((c) => c.batch === turn.batch),
      deps.config,
    );
    turn.batch = null;
  }
  if (appendAnswer) store.appendMessage({ turnId: turn.turnId, role: "assistant", content: text, kind: "answer" });
  if (outcome === "completed" || outcome === "failed" || outcome === "cancelled") {
    store.recordTurnOutcome({
      turnId: turn.turnId,
      status: outcome,
      startedAt: new Date(turn.startedAt).toISOString(),
      endedAt: new Date(deps.now()).toISOString(),
      iterations: turn.iterations,
      error: error ?? null,
    });
  }
  store.saveTurn("idle", null);
  const response = turnResponse(store, turn, outcome, text, error);
  events?.turnCompleted?.(response);
  return response;
}

/** The error a limit stops a turn with, logged as a warning with its figure (the design document's "Risks"). */
export function limitError(
  deps: Pick<TurnEndingDeps, "store" | "config" | "logger">,
  turn: TurnState,
  limit: TurnLimit,
  figure: number,
  detail?: string,
): TurnError {
  const error = turnLimitError(limit, figure, deps.config, detail);
  deps.logger.addCustomEvent("Warning", "[AgentReasoner_TurnLimit]", error.message, [
    ["SessionId", deps.store.identity().sessionId],
    ["TurnId", turn.turnId],
    ["Limit", limit],
    ["Figure", limit === "turn_timeout" || limit === "pause_expired" ? formatDuration(figure) : String(figure)],
  ]);
  return error;
}

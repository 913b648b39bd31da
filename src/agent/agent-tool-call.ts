// AgentToolCall and AgentExecuteResponse: what a turn reports, over HTTP and (later) the WebSocket.

export type ApprovalState = "pending" | "approved" | "denied";

/** One call the model made, mapped by the AgentToolExecutor (AGN-005 §5.3). */
export interface AgentToolCall {
  id: string;
  name: string;
  argumentsJson: string;
  /** Always true: every tool is mediated by the server (AGN-005 §3). */
  isServerTool: boolean;
  /** The tool's execute (or, for a client-final tool, its preflight) completed successfully. */
  wasExecuted: boolean;
  /** A client executes the final step (AGN-005 §6.2). */
  requiresClientExecution: boolean;
  requiresApproval: boolean;
  approval: ApprovalState | null;
  /** The result; for a client-final tool waiting on its client, the prepared request. */
  resultJson: string | null;
  errorMessage: string | null;
}

/** Where a call is in its life; only `settled` calls have a final result for the model. */
export type ToolCallState = "ready" | "awaiting_approval" | "awaiting_client" | "settled";

/** A call as the session stores it. */
export interface StoredToolCall extends AgentToolCall {
  turnId: string;
  /** The model response (iteration) the call came from; a batch resumes the loop when all its calls settle. */
  batch: number;
  position: number;
  state: ToolCallState;
  /** JSON-format calls: the model's `terminate` flag. */
  terminate: boolean;
}

export type TurnOutcome = "completed" | "awaiting_approval" | "awaiting_client" | "failed" | "cancelled";

export interface AgentExecuteResponse {
  sessionId: string;
  status: TurnOutcome;
  mode: string;
  text: string;
  toolCalls: AgentToolCall[];
  iterations: number;
  branchSessionId?: string;
  error?: { code: string; message: string };
}

export function publicToolCall(call: StoredToolCall): AgentToolCall {
  return {
    id: call.id,
    name: call.name,
    argumentsJson: call.argumentsJson,
    isServerTool: call.isServerTool,
    wasExecuted: call.wasExecuted,
    requiresClientExecution: call.requiresClientExecution,
    requiresApproval: call.requiresApproval,
    approval: call.approval,
    resultJson: call.resultJson,
    errorMessage: call.errorMessage,
  };
}

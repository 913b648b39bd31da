// AgentToolCall and AgentExecuteResponse: what a turn reports, over HTTP and the WebSocket. Each is one zod
// schema (the wire and /openapi.json use it); the types are inferred from it.
import { z } from "zod";
import type { ToolEffect } from "../tools/contract";
import { ElicitationSchema } from "../tools/elicitation";
import { TokenUsage } from "./turn-store";

export const ApprovalState = z.enum(["pending", "approved", "denied"]);
export type ApprovalState = z.infer<typeof ApprovalState>;

/** One call the model made, mapped by the AgentToolExecutor (AGN-005 §5.3). */
export const AgentToolCall = z.object({
  id: z.string(),
  name: z.string(),
  argumentsJson: z.string(),
  /** Always true: every tool is mediated by the server (AGN-005 §3). */
  isServerTool: z.boolean(),
  /** The tool's execute (or, for a client-final tool, its preflight) completed successfully. */
  wasExecuted: z.boolean(),
  /** A client executes the final step (AGN-005 §6.2). */
  requiresClientExecution: z.boolean(),
  requiresApproval: z.boolean(),
  approval: ApprovalState.nullable(),
  /** The result; for a client-final tool waiting on its client (or its approval), the prepared request. */
  resultJson: z.string().nullable(),
  errorMessage: z.string().nullable(),
  /** A tool of a remote MCP server: the server's registered name and the tool's own name there. */
  mcp: z.object({ server: z.string(), tool: z.string() }).optional(),
});
export type AgentToolCall = z.infer<typeof AgentToolCall>;

/** Where a call is in its life; only `settled` calls have a final result for the model. */
export const ToolCallState = z.enum(["ready", "awaiting_approval", "awaiting_client", "settled"]);
export type ToolCallState = z.infer<typeof ToolCallState>;

/** A tool's typed effect (src/tools/contract.ts), as a stored call keeps it until the loop applied it. */
const StoredToolEffect = z.object({
  type: z.literal("mode_changed"),
  to: z.string(),
  reason: z.string(),
  branch: z.boolean(),
}) satisfies z.ZodType<ToolEffect>;

/** A call as the session stores it (parsed with this schema on the way in). */
export const StoredToolCall = AgentToolCall.extend({
  turnId: z.string(),
  /** The model response (iteration) the call came from; a batch resumes the loop when all its calls settle. */
  batch: z.number().int(),
  position: z.number().int(),
  state: ToolCallState,
  /** JSON-format calls: the model's `terminate` flag. */
  terminate: z.boolean(),
  /** Typed effects of the tool's success, for the loop to apply once. */
  effects: z.array(StoredToolEffect).optional(),
  /** A line the loop adds to the result the model sees (a branch's new session id). */
  note: z.string().optional(),
});
export type StoredToolCall = z.infer<typeof StoredToolCall>;

/**
 * How a request to the session ended. `awaiting_input`: a tool's MCP server asks the user for input (an
 * elicitation); the call waits in the running turn until the answer comes (or the turn is cancelled).
 */
export const TurnOutcome = z.enum([
  "completed",
  "awaiting_approval",
  "awaiting_client",
  "awaiting_input",
  "failed",
  "cancelled",
]);
export type TurnOutcome = z.infer<typeof TurnOutcome>;

export const TurnError = z.object({ code: z.string(), message: z.string() });
export type TurnError = z.infer<typeof TurnError>;

/** A tool call's MCP server asks the user for input, in the middle of the call. */
export const PendingElicitation = z.object({
  elicitationId: z.string(),
  toolCallId: z.string(),
  /** The MCP server that asks, and the tool it asks for. */
  server: z.string(),
  tool: z.string(),
  message: z.string(),
  /** A flat JSON schema of the fields asked for (strings, numbers, booleans, enums). */
  requestedSchema: ElicitationSchema,
  /** When the question stops waiting and is answered `cancel`. */
  expiresAt: z.string(),
});
export type PendingElicitation = z.infer<typeof PendingElicitation>;

export const AgentExecuteResponse = z.object({
  sessionId: z.string(),
  status: TurnOutcome,
  mode: z.string(),
  text: z.string(),
  toolCalls: z.array(AgentToolCall),
  iterations: z.number().int(),
  branchSessionId: z.string().optional(),
  error: TurnError.optional(),
  /** With `awaiting_input`: what the user is asked. */
  elicitation: PendingElicitation.optional(),
  /** The tokens the turn's model calls used so far, as the model reported them. */
  usage: TokenUsage.optional(),
});
export type AgentExecuteResponse = z.infer<typeof AgentExecuteResponse>;

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
    ...(call.mcp ? { mcp: call.mcp } : {}),
  };
}

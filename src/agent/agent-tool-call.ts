// A tool call as the session stores it: the wire's AgentToolCall (src/wire/turn.ts) with where it is in its
// life, its batch and position, and the effects its success has for the loop.
import { z } from "zod";
import type { ToolEffect } from "../tools/contract";
import { AgentToolCall } from "../wire/turn";

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

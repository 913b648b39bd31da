// A turn an `output` guardrail stopped ends failed (its turn_completed frame says so); the request that drove it on
// a stream (SSE, the socket) is also told with an error frame naming the guardrail, as a refused message is.
import type { Outcome } from "../refusal";
import type { AgentExecuteResponse } from "../wire/turn";

/** The refusal-shaped error of a driven turn a guardrail stopped, or null. */
export function guardrailStop(outcome: Outcome<unknown>): { code: string; message: string } | null {
  if (!outcome.ok) return null;
  const error = (outcome.value as Partial<AgentExecuteResponse> | null)?.error;
  return error?.code === "guardrail_blocked" ? { code: error.code, message: error.message } : null;
}

// A session's refusal (src/refusal.ts) as the A2A error a client of either binding reads: what is not there is
// TaskNotFound (another org's or member's task too), bad input is RequestMalformed, and what the task or session
// cannot take now (busy, a budget, a key's limit, nothing waiting) is UnsupportedOperation with the session's words.
import { type A2AError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import type { Outcome, Refusal, RefusalCode } from "../refusal";

const NOT_FOUND: ReadonlySet<RefusalCode> = new Set(["session_not_found", "turn_not_found"]);
const BAD_INPUT: ReadonlySet<RefusalCode> = new Set([
  "invalid_tool_result",
  "duplicate_tool_call_id",
  "tool_call_not_pending",
  "unknown_mode",
  "attachment_not_accepted",
  "invalid_elicitation_answer",
  "guardrail_blocked",
]);

export function a2aErrorOf(refusal: Refusal): A2AError {
  const options = { message: refusal.message, metadata: { code: refusal.code } };
  if (NOT_FOUND.has(refusal.code)) return new TaskNotFoundError(options);
  if (BAD_INPUT.has(refusal.code)) return new RequestMalformedError(options);
  return new UnsupportedOperationError(options);
}

/** A session's answer: its value, or its refusal thrown as the A2A error. */
export function orThrow<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw a2aErrorOf(outcome);
}

// What domain code (the loop, the session, workflows) answers when it will not do what was asked: a code from
// one union and a message, never an HTTP status. The HTTP layer (errors.ts) maps each code to its status.

import { quoted } from "./quote";

export const REFUSAL_CODES = [
  "session_not_found",
  "session_busy",
  "session_awaiting_input",
  "nothing_pending",
  "nothing_to_cancel",
  "tool_call_not_pending",
  "duplicate_tool_call_id",
  "invalid_tool_result",
  "elicitation_not_pending",
  "invalid_elicitation_answer",
  "pause_expired",
  "rate_limit_exceeded",
  "budget_exceeded",
  "workflow_not_found",
  "invalid_workflow_parameters",
  "unknown_mode",
  "turn_not_found",
  "attachment_not_accepted",
  "invalid_branch_point",
  "invalid_guardrail",
  "guardrail_blocked",
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

export interface Refusal {
  ok: false;
  code: RefusalCode;
  message: string;
  /** The field the refusal is about (`results`, `mode`), for a client to show beside it. */
  param?: string;
  /** How long to wait before trying again, for a rate limit. */
  retryAfterSeconds?: number;
}

export type Outcome<T> = { ok: true; value: T } | Refusal;

export function refuse(
  code: RefusalCode,
  message: string,
  options: { param?: string | null; retryAfterSeconds?: number } = {},
): Refusal {
  return {
    ok: false,
    code,
    message,
    ...(options.param ? { param: options.param } : {}),
    ...(options.retryAfterSeconds !== undefined ? { retryAfterSeconds: options.retryAfterSeconds } : {}),
  };
}

/** The one answer for a session that does not exist, is another org's or another member's (the same to all). */
export function sessionNotFound(sessionId: string): Refusal {
  return refuse("session_not_found", `Session ${quoted(sessionId)} not found.`);
}

/** A turn the session never had (another session's, or made up). */
export function turnNotFound(turnId: string): Refusal {
  return refuse("turn_not_found", `Turn ${quoted(turnId)} not found in this session.`);
}

export function workflowNotFound(workflowId: string): Refusal {
  return refuse("workflow_not_found", `Workflow ${quoted(workflowId)} not found.`);
}

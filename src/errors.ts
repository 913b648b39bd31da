// The one error path of the HTTP layer: every error code, with its status and OpenAI error type, in one
// table; ApiError and the one OpenAI-shaped body (`{"error":{"message","type","code","param"}}`) built from it.
// Domain code refuses with a code (src/refusal.ts); this table is where a code becomes a status.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Refusal, RefusalCode } from "./refusal";

export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "rate_limit_error"
  | "server_error"
  | "upstream_error";

type Entry = readonly [status: ContentfulStatusCode, type: ApiErrorType];

const bad: Entry = [400, "invalid_request_error"];
const missing: Entry = [404, "not_found_error"];
const conflict: Entry = [409, "conflict_error"];
const upstream: Entry = [502, "upstream_error"];
const slowUpstream: Entry = [504, "upstream_error"];

/**
 * Every code a client can get, with the status and type it comes with. The socket's frame-only codes are
 * here too (their status is what the HTTP route would answer for the same problem).
 */
export const ERROR_CODES = {
  // 400: the request is wrong; `param` names what.
  invalid_request: bad,
  invalid_json: bad,
  unknown_field: bad,
  unknown_mode: bad,
  invalid_dataset: bad,
  invalid_tool_result: bad,
  invalid_elicitation_answer: bad,
  duplicate_tool_call_id: bad,
  invalid_workflow_parameters: bad,
  invalid_branch_point: bad,
  malformed_frame: bad,
  unknown_frame_type: bad,
  invalid_frame: bad,
  frame_too_large: bad,
  attachment_not_accepted: bad,
  invalid_idempotency_key: bad,
  invalid_guardrail: bad,
  guardrail_blocked: bad,
  // 401, 403: who is asking.
  missing_api_key: [401, "authentication_error"],
  invalid_api_key: [401, "authentication_error"],
  api_key_expired: [401, "authentication_error"],
  invalid_ticket: [401, "authentication_error"],
  sign_in_expired: [401, "authentication_error"],
  invalid_access_token: [401, "authentication_error"],
  invalid_access_assertion: [401, "authentication_error"],
  sign_in_failed: [401, "authentication_error"],
  invalid_id_token: [401, "authentication_error"],
  invalid_sign_in_state: bad,
  insufficient_scope: [403, "permission_error"],
  deployment_owned: [403, "permission_error"],
  user_disabled: [403, "permission_error"],
  csrf_token_mismatch: [403, "permission_error"],
  host_not_allowed: [403, "permission_error"],
  origin_not_allowed: [403, "permission_error"],
  // 404: nothing there (for another org's session too).
  route_not_found: missing,
  session_not_found: missing,
  user_not_found: missing,
  grant_not_found: missing,
  sign_in_not_configured: missing,
  workflow_not_found: missing,
  system_prompt_not_found: missing,
  mode_not_found: missing,
  mode_version_not_found: missing,
  eval_dataset_not_found: missing,
  eval_run_not_found: missing,
  model_not_found: missing,
  response_not_found: missing,
  turn_not_found: missing,
  not_offered_by_demo: missing,
  mcp_server_not_found: missing,
  model_route_not_found: missing,
  api_key_not_found: missing,
  secret_not_found: missing,
  webhook_not_found: missing,
  webhook_delivery_not_found: missing,
  schedule_not_found: missing,
  memory_not_found: missing,
  // 409: the session cannot take this now.
  session_busy: conflict,
  session_awaiting_input: conflict,
  nothing_pending: conflict,
  nothing_to_cancel: conflict,
  tool_call_not_pending: conflict,
  elicitation_not_pending: conflict,
  pause_expired: conflict,
  mcp_server_in_use: conflict,
  model_route_in_use: conflict,
  secret_in_use: conflict,
  schedule_limit_reached: conflict,
  idempotency_key_in_flight: conflict,
  idempotency_answer_not_kept: conflict,
  webhook_disabled: conflict,
  memory_disabled: conflict,
  user_not_disabled: conflict,
  memory_limit_reached: conflict,
  // 405, 413, 415, 422, 426, 429.
  method_not_allowed: [405, "invalid_request_error"],
  idempotency_key_reused: [422, "invalid_request_error"],
  request_too_large: [413, "invalid_request_error"],
  unsupported_media_type: [415, "invalid_request_error"],
  upgrade_required: [426, "invalid_request_error"],
  rate_limit_exceeded: [429, "rate_limit_error"],
  budget_exceeded: [429, "rate_limit_error"],
  // 500: ours; logged with the stack, answered without it.
  internal_error: [500, "server_error"],
  mode_catalog_corrupt: [500, "server_error"],
  misconfigured: [500, "server_error"],
  // 500, 502: an agent turn on the OpenAI door that ended without an answer (its cause in the message).
  agent_turn_failed: [500, "server_error"],
  agent_model_failed: upstream,
  // A model call that failed for the request's own sake, or was rate limited (docs/errors.md), on the agent doors.
  context_length_exceeded: bad,
  content_filtered: bad,
  model_bad_request: bad,
  model_rate_limited: [429, "rate_limit_error"],
  // 502, 504: the upstream LLM (the passthrough).
  upstream_unreachable: upstream,
  upstream_auth_failed: upstream,
  upstream_stream_failed: upstream,
  upstream_invalid_answer: upstream,
  upstream_timeout: slowUpstream,
  upstream_idle_timeout: slowUpstream,
} as const satisfies Record<string, Entry> & Record<RefusalCode, Entry>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface OpenAIErrorBody {
  error: { message: string; type: ApiErrorType; code: string | null; param: string | null };
}

export interface ErrorOptions {
  param?: string | null;
  headers?: Record<string, string>;
}

/** The OpenAI-shaped body of `code`, its type from the table. */
export function errorBody(code: ErrorCode, message: string, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type: ERROR_CODES[code][1], code, param } };
}

/**
 * An error body with the seconds to wait in it (`retry_after_seconds`), for an answer with no header left to carry
 * Retry-After (a stream's error event or frame); the body as it is when there is none.
 */
export function withRetryAfterSeconds<Body extends { error: object }>(
  body: Body,
  seconds: number | null | undefined,
): Body {
  return seconds === null || seconds === undefined
    ? body
    : { ...body, error: { ...body.error, retry_after_seconds: seconds } };
}

/** A whole error Response, for code that answers without Hono's context (the session object, the demo face). */
export function errorResponse(code: ErrorCode, message: string, options: ErrorOptions = {}): Response {
  return Response.json(errorBody(code, message, options.param ?? null), {
    status: ERROR_CODES[code][0],
    headers: options.headers ?? {},
  });
}

/** Thrown anywhere in a route; `app.onError` turns it into the OpenAI-shaped body with the table's status. */
export class ApiError extends Error {
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: ErrorOptions = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }

  get status(): ContentfulStatusCode {
    return ERROR_CODES[this.code][0];
  }

  get type(): ApiErrorType {
    return ERROR_CODES[this.code][1];
  }

  toBody(): OpenAIErrorBody {
    return errorBody(this.code, this.message, this.param);
  }

  /** A domain refusal, answered with its code's status (and `Retry-After` for a rate limit). */
  static from(refusal: Refusal): ApiError {
    return new ApiError(refusal.code, refusal.message, {
      param: refusal.param ?? null,
      headers: refusal.retryAfterSeconds !== undefined ? { "retry-after": String(refusal.retryAfterSeconds) } : {},
    });
  }
}

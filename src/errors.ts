// ApiError and the one error body every route answers with: OpenAI's `{"error":{...}}` shape.
import type { ContentfulStatusCode } from "hono/utils/http-status";

export type ApiErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "conflict_error"
  | "rate_limit_error"
  | "server_error"
  | "upstream_error";

export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

/** Thrown anywhere in a route; `app.onError` turns it into an OpenAI-shaped body. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly type: ApiErrorType,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  toBody(): OpenAIErrorBody {
    return errorBody(this.message, this.type, this.code, this.param);
  }

  static badRequest(message: string, param: string | null = null, code = "invalid_request"): ApiError {
    return new ApiError(400, "invalid_request_error", message, code, param);
  }

  static notFound(message: string, code = "not_found"): ApiError {
    return new ApiError(404, "not_found_error", message, code);
  }

  static conflict(message: string, code: string): ApiError {
    return new ApiError(409, "conflict_error", message, code);
  }

  static rateLimited(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(429, "rate_limit_error", message, "rate_limit_exceeded", null, {
      "retry-after": String(retryAfterSeconds),
    });
  }
}

export function errorBody(
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): OpenAIErrorBody {
  return { error: { message, type, code, param } };
}

// What a client sees when the upstream fails: its own status and OpenAI error body when it sent one, else
// our OpenAI-shaped body with a fixed text (what the upstream said goes to the log), and on a stream that is
// already under way an SSE error frame.
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, type ApiErrorType, errorBody, type OpenAIErrorBody, withRetryAfterSeconds } from "../errors";
import { ModelError } from "../llm/chat-model";
import { classifyUpstreamError, retryAfterSeconds, upstreamWords } from "../llm/upstream-error";
import type { AdminLogger } from "../observability/admin-logger";
import { UpstreamTimeout } from "./exchange";
import { clientResponseHeaders } from "./headers";

/** Which model route failed, and the ones that failed before it: said in every failure's message. */
export interface FailedRoutes {
  route: { name: string; provider: string; apiKeySecret: string | null };
  failed: readonly string[];
}

/** ` (model route 'b'; 'a' failed before it)`: the part of a failure's message that names the routes. */
export function routeClause(routes: FailedRoutes | undefined): string {
  if (!routes) return "";
  const before = routes.failed.length > 0 ? `; ${routes.failed.map((n) => `'${n}'`).join(", ")} failed before it` : "";
  return ` (model route '${routes.route.name}'${before})`;
}

/** The headers that say which route answered (or failed last), and which failed before it. */
export function routeHeaders(routes: FailedRoutes): Record<string, string> {
  return {
    "x-aptix-route": routes.route.name,
    ...(routes.failed.length > 0 ? { "x-aptix-route-failed": routes.failed.join(",") } : {}),
  };
}

/** A failure before any upstream answer: 504 when it was too slow, 502 when it could not be reached. */
export function upstreamFailure(error: unknown, routes?: FailedRoutes): ApiError {
  const headers = routes ? routeHeaders(routes) : {};
  if (error instanceof UpstreamTimeout) {
    const code = error.kind === "first_byte" ? "upstream_timeout" : "upstream_idle_timeout";
    return new ApiError(code, `${error.message.replace(/\.$/, "")}${routeClause(routes)}.`, { headers });
  }
  // The runtime's words can quote the upstream URL (and any credentials in it): they go to the log, not here.
  return new ApiError("upstream_unreachable", `The upstream LLM could not be reached${routeClause(routes)}.`, {
    headers,
  });
}

/**
 * The upstream's 401/403 about our own key would tell the client its key is wrong (and may quote a
 * masked piece of ours), so either becomes a 502 that names the server's configuration.
 */
function upstreamAuthFailed(credentials: string): OpenAIErrorBody {
  return errorBody(
    "upstream_auth_failed",
    `The upstream LLM refused this server's credentials (${credentials}); the server is misconfigured.`,
  );
}

/** The credentials a route's upstream gets, as an error names them: its secret's name, never the key. */
export function credentialsOf(route: { name: string; provider: string; apiKeySecret: string | null }): string {
  if (route.provider === "workers_ai") return `the AI binding of model route '${route.name}'`;
  if (route.name === "default") return "LLM_API_KEY";
  return route.apiKeySecret
    ? `the secret ${route.apiKeySecret} of model route '${route.name}'`
    : `model route '${route.name}', which sends no key`;
}

function isOpenAIErrorBody(value: unknown): value is { error: { message: string } } {
  if (typeof value !== "object" || value === null || !("error" in value)) return false;
  const error = value.error;
  return typeof error === "object" && error !== null && "message" in error && typeof error.message === "string";
}

function errorType(status: number): ApiErrorType {
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "upstream_error" : "invalid_request_error";
}

/** How much of an upstream's error body the log keeps. */
const LOGGED_BODY_CHARS = 500;

/** Who answered the error, for the log and for a refusal of our own credentials. */
export interface UpstreamErrorContext {
  logger: AdminLogger;
  /** Takes the secrets in play out of the upstream's words (src/secret-redaction.ts), for the client and the log. */
  redact: (text: string) => string;
  /** The credentials the upstream refused, as an error names them (`credentialsOf`). */
  credentials?: string;
  /** The model route whose upstream answered. */
  route?: string;
}

/**
 * The body to send for an upstream error answer: its own text when OpenAI-shaped, else a fixed text for its
 * status (the agent loop's, ModelError's). Any other body (an HTML error page, a framework's stack trace) can
 * quote the upstream's address and internals: its start goes to the log, never to the client.
 */
export function upstreamErrorBody(
  status: number,
  upstreamText: string,
  context: UpstreamErrorContext,
): { status: number; body: string } {
  // An upstream may echo what it was sent (our key among it): its words never reach a client or a log line unredacted.
  const text = context.redact(upstreamText);
  const refusedCredentials = status === 401 || status === 403;
  if (!refusedCredentials && isOpenAIError(text)) return { status, body: text };
  context.logger.addError(
    "[passthrough_upstream_error]",
    refusedCredentials
      ? "The upstream refused this server's credentials; the client got upstream_auth_failed."
      : "The upstream answered an error that is not OpenAI-shaped; the client got a fixed text.",
    [
      ["status", String(status)],
      ["route", context.route ?? ""],
      ["body", text.trim().slice(0, LOGGED_BODY_CHARS)],
    ],
  );
  if (refusedCredentials) {
    return { status: 502, body: JSON.stringify(upstreamAuthFailed(context.credentials ?? "LLM_API_KEY")) };
  }
  // The cause read from the status and whatever code or type the body names (src/llm/upstream-error.ts): its text.
  const cause = classifyUpstreamError(status, upstreamWords(text));
  return {
    status,
    // The upstream's own status, mirrored: its code says so (`upstream_503`), outside our table on purpose.
    body: JSON.stringify({
      error: {
        message: new ModelError(cause, "").message,
        type: errorType(status),
        code: `upstream_${status}`,
        param: null,
      },
    } satisfies OpenAIErrorBody),
  };
}

function isOpenAIError(text: string): boolean {
  try {
    return isOpenAIErrorBody(JSON.parse(text));
  } catch {
    // Not JSON (an HTML error page, plain text).
    return false;
  }
}

/** Mirrors an upstream error answer: its status, its rate-limit and retry headers, an OpenAI body. */
export function upstreamErrorResponse(response: Response, text: string, context: UpstreamErrorContext): Response {
  const { status, body } = upstreamErrorBody(response.status, text, context);
  const headers = clientResponseHeaders(response.headers);
  headers.set("content-type", "application/json");
  return new Response(body, { status: status as ContentfulStatusCode, headers });
}

const encoder = new TextEncoder();

/** `data: {"error":{...}}` and the blank line that ends the event: how the `openai` SDK learns a stream failed. */
export function errorFrame(body: OpenAIErrorBody | string): Uint8Array {
  // Raw line breaks in JSON are only whitespace between tokens; one would end the `data:` line early.
  const json = typeof body === "string" ? body.replace(/[\r\n]+/g, "") : JSON.stringify(body);
  return encoder.encode(`data: ${json}\n\n`);
}

/**
 * An error frame's body with the upstream's Retry-After in it (`retry_after_seconds`): a stream already answered 200
 * has no header left to carry it. A body that is not an OpenAI-shaped JSON error is left as it is.
 */
export function withRetryAfter(body: string, retryAfter: string | null): string {
  const seconds = retryAfterSeconds(retryAfter);
  if (seconds === null) return body;
  try {
    const value: unknown = JSON.parse(body);
    return isOpenAIErrorBody(value) ? JSON.stringify(withRetryAfterSeconds(value, seconds)) : body;
  } catch {
    // Not JSON: sent as it is.
    return body;
  }
}

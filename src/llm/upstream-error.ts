// Which of our causes an upstream's error answer stands for, read from its status and from its own code and type:
// OpenAI's `{"error":{"message","type","code"}}`, Anthropic's `{"type":"error","error":{"type","message"}}`,
// Workers AI's `{"errors":[{"code","message"}]}` and the binding's `<code>: <message>`, vLLM's flat `{"message"}`.
// One reading for every route type and door (the loop's models, their stream error events, the passthrough's
// relay); docs/errors.md.
import { ModelError, type ModelErrorCode } from "./chat-model";

/** What an upstream's error body says, whatever its provider's shape; null where it does not say. */
export interface UpstreamWords {
  code: string | null;
  type: string | null;
  message: string | null;
  /** The request parameter an OpenAI-shaped error names (`error.param`), where it names one. */
  param?: string | null;
}

const NOTHING: UpstreamWords = { code: null, type: null, message: null };

const str = (value: unknown): string | null =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : null;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The code, type and message of an error body in any of the shapes above (a body that is none: nothing). */
export function upstreamWords(body: string | unknown): UpstreamWords {
  let json: unknown = body;
  if (typeof body === "string") {
    try {
      json = JSON.parse(body);
    } catch {
      return NOTHING;
    }
  }
  if (!isRecord(json)) return NOTHING;
  // OpenAI's and Anthropic's (both carry `error`; Anthropic's outer `type` is "error", its own type inside).
  const error = json.error;
  if (isRecord(error)) {
    return { code: str(error.code), type: str(error.type), message: str(error.message), param: str(error.param) };
  }
  if (typeof error === "string") return { code: null, type: null, message: error };
  // Workers AI's REST API: `{"success":false,"errors":[{"code":5007,"message":"..."}]}`.
  const first = Array.isArray(json.errors) ? json.errors[0] : undefined;
  if (isRecord(first)) return { code: str(first.code), type: null, message: str(first.message) };
  // vLLM's and some gateways' flat body: `{"object":"error","message","type","code"}`.
  if (typeof json.message === "string") return { code: str(json.code), type: str(json.type), message: json.message };
  return NOTHING;
}

/** Words by which providers say the prompt does not fit (OpenAI, Anthropic, vLLM, Ollama, Bedrock, Workers AI). */
const CONTEXT_WORDS =
  /prompt is too long|context[ _-]?(length|window)|maximum context|reduce the length of the messages|input is too long|too many (input )?tokens|exceeds? (the )?(model'?s? )?(max(imum)? )?(context|input length)/i;

/** Words by which a provider says the model named is not one it has. */
const NO_MODEL_WORDS =
  /\bmodel\b.*\b(does not exist|not found|not exist)\b|no such model|unknown model|invalid model|^model: /i;

const FILTER_CODES = new Set(["content_filter", "content_policy_violation", "content_filtered"]);

/**
 * Our cause for an upstream's error answer. The status decides where it is plain (401/403 the key, 429 the rate,
 * 408/504 the time, 5xx and Anthropic's 529 the service); within the 4xx, the upstream's own code and type decide,
 * and "the context is too long" only when the upstream says so.
 */
export function classifyUpstreamError(status: number, words: UpstreamWords): ModelErrorCode {
  const { code, type } = words;
  const message = words.message ?? "";
  if (status === 401 || status === 403 || type === "authentication_error" || code === "invalid_api_key") {
    return "model_auth_failed";
  }
  if (status === 429 || type === "rate_limit_error" || code === "rate_limit_exceeded") return "model_rate_limited";
  if (status === 408 || status === 504) return "model_timeout";
  if (status >= 500 || type === "overloaded_error") return "model_unavailable";
  if (code === "context_length_exceeded" || CONTEXT_WORDS.test(message)) return "context_length_exceeded";
  if (FILTER_CODES.has(code ?? "") || FILTER_CODES.has(type ?? "")) return "content_filtered";
  const namesNoModel = (status === 404 || status === 400 || type === "not_found_error") && NO_MODEL_WORDS.test(message);
  if (code === "model_not_found" || namesNoModel) return "model_not_found";
  // A 404 that names no model: the route's URL is wrong, not the request; the service is not there.
  if (status === 404) return "model_unavailable";
  return "model_bad_request";
}

/**
 * The seconds of a Retry-After header (delta-seconds or an HTTP date, at least 1 for a date), or null when it has
 * none we can read. The one reader: the retries' wait, the turn's `retryAfterSeconds`, the passthrough's frames.
 */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const at = Date.parse(trimmed);
  // A date already past still asks for a wait, if a short one: 0 only when the upstream says 0.
  return Number.isFinite(at) ? Math.max(1, Math.ceil((at - now) / 1000)) : null;
}

/** An upstream's error answer as a ModelError: its cause, its Retry-After, and (a bad request) its own words redacted. */
export function modelErrorOf(
  status: number,
  body: string,
  retryAfter: string | null,
  redact: (text: string) => string,
  detail: string,
): ModelError {
  const words = upstreamWords(body);
  const code = classifyUpstreamError(status, words);
  if (code === "model_bad_request")
    return ModelError.badRequest(detail, status, words.message && redact(words.message));
  // Retry-After means something on a 429 and a 503 (RFC 9110): passed on with the rate limit and the service down.
  const carriesWait = code === "model_rate_limited" || code === "model_unavailable";
  return new ModelError(code, detail, status, {
    retryAfterSeconds: carriesWait ? retryAfterSeconds(retryAfter) : null,
  });
}

/** The causes an error event in the middle of a stream can name by its code or type; any other is the service's. */
const NAMED_IN_STREAM: ReadonlySet<ModelErrorCode> = new Set([
  "context_length_exceeded",
  "content_filtered",
  "model_rate_limited",
  "model_auth_failed",
  "model_not_found",
]);

/** An OpenAI-compatible stream's error event (no status of its own) as a ModelError. */
export function streamErrorOf(event: unknown, redact: (text: string) => string, detail: string): ModelError {
  const words = upstreamWords(event);
  const named = classifyUpstreamError(400, words);
  return new ModelError(NAMED_IN_STREAM.has(named) ? named : "model_unavailable", redact(detail));
}

// One model call over HTTP, as every HTTP provider's ChatModel makes it: a timeout per attempt, the caller's abort,
// retries with backoff on the statuses worth another try (Retry-After honoured), the answer read by the provider,
// and every failure a ModelError whose detail never carries our key.
import type { z } from "zod";
import { redactKeys } from "../secret-redaction";
import { type ChatResponse, ModelError } from "./chat-model";
import { deadline } from "./deadline";
import { backoff, describeError } from "./retry";
import { modelErrorOf, retryAfterSeconds } from "./upstream-error";

/** How much of an upstream's error body the log keeps. */
export const DETAIL_CHARS = 500;

/** The longest wait a Retry-After header may ask for before a retry. */
const MAX_RETRY_AFTER_MS = 10_000;

export interface HttpModelCall {
  /** Sends one attempt. */
  send(signal: AbortSignal): Promise<Response>;
  /** Reads a 2xx answer (throws a ModelError when it is not one). */
  read(response: Response): Promise<ChatResponse>;
  /** The statuses retried. */
  retryable: ReadonlySet<number>;
  maxRetries: number;
  callTimeoutMs: number;
  /** First backoff; doubled each retry (default 250 ms). */
  retryBaseMs?: number | undefined;
  /** The caller's cancel switch. */
  signal?: AbortSignal | undefined;
  /** Takes our key out of a detail. */
  redact(text: string): string;
}

/** Our own key never reaches a log line, even when an upstream quotes it back in an error. */
export function redactKey(key: string, text: string): string {
  return redactKeys(text, [key]);
}

/**
 * The wait before retry `attempt`: the upstream's Retry-After (delta-seconds or an HTTP date, read as the door
 * reads it) up to 10 s, else the backoff doubling from `baseMs`.
 */
export function retryDelay(attempt: number, retryAfter: string | null, baseMs: number, now = Date.now()): number {
  const seconds = retryAfterSeconds(retryAfter, now);
  return seconds !== null ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : baseMs * 2 ** attempt;
}

export async function callWithRetries(call: HttpModelCall): Promise<ChatResponse> {
  const { signal, redact } = call;
  const baseMs = call.retryBaseMs ?? 250;
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const timer = deadline(call.callTimeoutMs, signal);
    try {
      let response: Response;
      try {
        response = await call.send(timer.signal);
      } catch (error) {
        signal?.throwIfAborted();
        if (timer.signal.aborted) throw ModelError.timeout(call.callTimeoutMs);
        if (attempt < call.maxRetries) {
          await backoff(retryDelay(attempt, null, baseMs), signal);
          continue;
        }
        throw new ModelError("model_unavailable", redact(`unreachable: ${describeError(error)}`));
      }
      if (response.ok) {
        try {
          return refusedByFilter(await call.read(response));
        } catch (error) {
          signal?.throwIfAborted();
          if (timer.signal.aborted) throw ModelError.timeout(call.callTimeoutMs);
          if (error instanceof ModelError) throw error;
          throw new ModelError("model_bad_response", redact(`reading the answer failed: ${describeError(error)}`));
        }
      }
      const text = await response.text().catch(() => "");
      if (call.retryable.has(response.status) && attempt < call.maxRetries) {
        await backoff(retryDelay(attempt, response.headers.get("retry-after"), baseMs), signal);
        continue;
      }
      throw modelErrorOf(
        response.status,
        text,
        response.headers.get("retry-after"),
        redact,
        redact(`HTTP ${response.status}: ${redact(text).slice(0, DETAIL_CHARS) || response.statusText || "no body"}`),
      );
    } finally {
      timer.clear();
    }
  }
}

/**
 * An answer the provider's content filter stopped (OpenAI's finish_reason `content_filter`, Anthropic's stop_reason
 * `refusal`, which the translation reads as it) is a content_filtered failure, not an answer cut short.
 */
function refusedByFilter(answer: ChatResponse): ChatResponse {
  if (answer.finishReason !== "content_filter") return answer;
  throw new ModelError("content_filtered", "the answer finished with content_filter");
}

/** A 200's media type, lower case, without its parameters ("" when it has none). */
export function mediaTypeOf(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** A 200's JSON body as `schema` reads it (`what` it must be); anything else is a bad response, its detail redacted. */
export async function jsonAnswer<T>(
  response: Response,
  schema: z.ZodType<T>,
  what: string,
  redact: (text: string) => string,
): Promise<T> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ModelError("model_bad_response", redact(`200 body is not JSON: ${redact(text).slice(0, DETAIL_CHARS)}`));
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new ModelError(
      "model_bad_response",
      redact(`200 body is not ${what}: ${redact(text).slice(0, DETAIL_CHARS)}`),
    );
  }
  return parsed.data;
}

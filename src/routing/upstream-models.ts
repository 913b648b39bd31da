// What a route's upstream says about itself, asked directly with a short timeout (issue 41): the models it lists
// (`GET {baseUrl}/models` for an OpenAI-compatible one, `GET {baseUrl}/v1/models` with x-api-key and
// anthropic-version for Anthropic's; both answer `{"data":[{"id"}]}`), and an upstream's own words for a refusal,
// after redaction. An admin's route PUT warns from it; the health check (route-health.ts) reports from it.
import { z } from "zod";
import { DEFAULT_ANTHROPIC_VERSION } from "../llm/anthropic-chat-model";
import { upstreamWords } from "../llm/upstream-error";
import type { ModelRoute } from "./model-routes";

/** How long a health check waits for an upstream (each request; GET /admin/health may ask for another). */
export const UPSTREAM_CHECK_TIMEOUT_MS = 5_000;
/** How long a route write waits for the upstream's model list: a slow upstream costs the admin a warning, not time. */
export const ROUTE_WRITE_CHECK_TIMEOUT_MS = 2_000;
/** How many of an upstream's models a warning or a failed check names. */
const MODELS_NAMED = 8;
/** How much of an upstream's words a check keeps. */
const MAX_WORDS_CHARS = 300;
/** Anthropic's largest page of models (its default is 20). */
const ANTHROPIC_MODELS_PAGE = 1000;

const ModelList = z.object({ data: z.array(z.object({ id: z.string() })) });

/** What asking an upstream for its models came to. */
export type ModelListing =
  /** The ids it lists. */
  | { kind: "listed"; status: number; ids: string[] }
  /** It refused the key (401, 403), in its words. */
  | { kind: "refused"; status: number; words: string }
  /** It offers no model list (404, 405, or an answer that is not one): nothing to say about the model from it. */
  | { kind: "unoffered"; status: number }
  /** It answered with another failure (a 5xx, a 429), in its words. */
  | { kind: "failed"; status: number; words: string }
  /** No answer: a network failure or the timeout. */
  | { kind: "unreachable"; words: string };

/** A route whose upstream is reached over HTTP with a key. */
export type HttpRoute = ModelRoute & { provider: "openai_compatible" | "anthropic"; baseUrl: string };

export const isHttpRoute = (route: ModelRoute): route is HttpRoute =>
  (route.provider === "openai_compatible" || route.provider === "anthropic") && route.baseUrl !== null;

/** The headers that carry `key` to the route's upstream, as the route's own calls send it. */
export function upstreamHeaders(route: HttpRoute, key: string): Record<string, string> {
  if (route.provider === "anthropic") {
    return { "x-api-key": key, "anthropic-version": route.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION };
  }
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** The URL of `path` (`/models`, `/chat/completions`, `/messages`) on the route's upstream. */
export function upstreamUrl(route: HttpRoute, path: string): string {
  // An Anthropic route's base URL is Anthropic's own, without /v1 (route-models.ts).
  return route.provider === "anthropic" ? `${route.baseUrl}/v1${path}` : `${route.baseUrl}${path}`;
}

/** The URL of `path` on the route's upstream as a message may show it: without a user name or password in it. */
export function shownUrl(route: HttpRoute, path: string): string {
  const url = upstreamUrl(route, path);
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}

/**
 * An upstream's words for a failure, to show: `code: message` (or `type: message`) as upstreamWords reads any
 * provider's error body, else the start of its text; every key `redact` knows taken out.
 */
export function shownUpstreamWords(text: string, redact: (text: string) => string): string {
  const { code, type, message } = upstreamWords(text);
  const label = code ?? type;
  const words = message === null ? text.trim() : `${label ?? ""}${label ? ": " : ""}${message}`;
  const clean = redact(words).replace(/\s+/g, " ");
  return clean.length > MAX_WORDS_CHARS ? `${clean.slice(0, MAX_WORDS_CHARS - 1)}…` : clean || "(no body)";
}

/** Why a request got no answer, in words: the timeout, or the network's error. */
export function noAnswerWords(error: unknown, timeoutMs: number, redact: (text: string) => string): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs} ms`;
  }
  return redact(error instanceof Error ? error.message : String(error));
}

/**
 * Names kept for documentation and tests (RFC 2606, RFC 6761): the top-level .example, .invalid and .test never
 * resolve, and example.com, .net and .org serve no model. Not worth a lookup that can only fail.
 */
const NEVER_RESOLVES = /(\.(example|invalid|test)|(^|\.)example\.(com|net|org))\.?$/i;

/** Why the route's upstream cannot be asked at all, or null. */
function unaskable(route: HttpRoute): string | null {
  let host: string;
  try {
    host = new URL(route.baseUrl).hostname;
  } catch {
    return "the base URL is not a URL";
  }
  return NEVER_RESOLVES.test(host) ? `${host} is under a reserved name that never resolves` : null;
}

/** Asks the route's upstream for its models with `key`, waiting at most `timeoutMs`. */
export async function listUpstreamModels(
  route: HttpRoute,
  key: string,
  options: { timeoutMs?: number; redact: (text: string) => string },
): Promise<ModelListing> {
  const timeoutMs = options.timeoutMs ?? UPSTREAM_CHECK_TIMEOUT_MS;
  const never = unaskable(route);
  if (never) return { kind: "unreachable", words: never };
  const query = route.provider === "anthropic" ? `?limit=${ANTHROPIC_MODELS_PAGE}` : "";
  let response: Response;
  let text: string;
  try {
    response = await fetch(upstreamUrl(route, `/models${query}`), {
      headers: upstreamHeaders(route, key),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    return { kind: "unreachable", words: noAnswerWords(error, timeoutMs, options.redact) };
  }
  const { status } = response;
  if (status === 401 || status === 403)
    return { kind: "refused", status, words: shownUpstreamWords(text, options.redact) };
  if (status === 404 || status === 405) return { kind: "unoffered", status };
  if (!response.ok) return { kind: "failed", status, words: shownUpstreamWords(text, options.redact) };
  let list: z.infer<typeof ModelList> | null = null;
  try {
    list = ModelList.parse(JSON.parse(text));
  } catch {
    // A 200 that is not a model list (an HTML page, another shape): the upstream offers none we can read.
  }
  return list ? { kind: "listed", status, ids: list.data.map((m) => m.id) } : { kind: "unoffered", status };
}

/** A few of the listed ids, for a message: "a, b, c (and 12 more)". */
export function someModels(ids: readonly string[]): string {
  if (ids.length === 0) return "none";
  const named = ids.slice(0, MODELS_NAMED).join(", ");
  return ids.length > MODELS_NAMED ? `${named} (and ${ids.length - MODELS_NAMED} more)` : named;
}

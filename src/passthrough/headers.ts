// Which headers cross the passthrough, in each direction: an allowlist, so hop-by-hop headers, cookies,
// SDK telemetry and, above all, the client's own key never reach the upstream.

/** Request headers the upstream may act on, besides the prefixes below. */
const REQUEST_HEADERS = new Set(["content-type", "accept"]);
/** Response headers a client may act on (rate-limit hints, retry advice, OpenAI's metadata). */
const RESPONSE_HEADERS = new Set(["content-type", "retry-after"]);
const PASSED_PREFIXES = ["openai-", "anthropic-"];
const ANTHROPIC_PREFIXES = ["anthropic-"];
/**
 * Never crossed, either way: a client must not choose which organization or project our LLM_API_KEY
 * bills, and the upstream's answer must not tell clients our account's ids.
 */
const ACCOUNT_HEADERS = new Set(["openai-organization", "openai-project"]);
const RESPONSE_PREFIXES = [...PASSED_PREFIXES, "x-ratelimit-"];

function hasPrefix(name: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) if (name.startsWith(prefix)) return true;
  return false;
}

/** How an upstream takes our key: OpenAI's bearer token, or (with an `anthropicVersion`) Anthropic's x-api-key. */
export interface UpstreamCredentials {
  apiKey: string;
  /** The route's anthropic-version, sent unless the client sent its own: the upstream speaks the Messages API. */
  anthropicVersion?: string | null;
}

/**
 * The headers sent upstream: the client's allowlisted ones, the request id (the client's own when it
 * sent a valid one, so both sides' logs share it), our trace context when tracing is on (the client's own
 * `traceparent` is never passed on: it is continued by our span) and the server's key in place of the
 * client's. An Anthropic upstream gets the key as `x-api-key`, the client's `anthropic-*` headers
 * (`anthropic-beta`, its own `anthropic-version`) and no `openai-*` ones.
 */
export function upstreamRequestHeaders(
  incoming: Headers,
  upstream: UpstreamCredentials,
  requestId: string,
  trace: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const anthropic = upstream.anthropicVersion != null;
  const prefixes = anthropic ? ANTHROPIC_PREFIXES : PASSED_PREFIXES;
  // A plain record (as a fetch takes it): the runtime makes its headers once, not one call a header.
  const out: Record<string, string> = {};
  for (const [name, value] of incoming) {
    if (ACCOUNT_HEADERS.has(name)) continue;
    if (REQUEST_HEADERS.has(name) || hasPrefix(name, prefixes)) out[name] = value;
  }
  out["x-request-id"] = requestId;
  // Tracing off, nothing to put: the allowlist never passes the client's own trace headers.
  for (const name in trace) out[name] = trace[name] as string;
  if (upstream.anthropicVersion != null) {
    out["x-api-key"] = upstream.apiKey;
    out["anthropic-version"] ??= upstream.anthropicVersion;
  } else {
    out.authorization = `Bearer ${upstream.apiKey}`;
  }
  return out;
}

/** The upstream response headers a client sees; ours (the request id) are added by the app. */
export function clientResponseHeaders(upstream: Headers): Headers {
  const out = new Headers();
  for (const [name, value] of upstream) {
    if (ACCOUNT_HEADERS.has(name)) continue;
    if (RESPONSE_HEADERS.has(name) || hasPrefix(name, RESPONSE_PREFIXES)) out.set(name, value);
  }
  return out;
}

/**
 * Headers of a relayed event stream. `Content-Encoding: identity` is how a Worker turns off the
 * edge's compression, which would otherwise hold events back to fill compression blocks.
 */
export function eventStreamHeaders(upstream?: Headers): Headers {
  const out = upstream ? clientResponseHeaders(upstream) : new Headers();
  out.set("content-type", upstream?.get("content-type") ?? "text/event-stream; charset=utf-8");
  out.set("cache-control", "no-cache");
  out.set("content-encoding", "identity");
  return out;
}

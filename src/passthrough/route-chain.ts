// The passthrough's model routes: a request whose `model` names a route goes to that route's upstream with the
// route's model and key, and on to its fallbacks when one fails before its first byte (unreachable, its own
// timeout, 429, 5xx), as long as nothing was committed to the client; any other `model` goes to `default`,
// its bytes untouched, as before routes existed. The client's prompt is never rewritten: only `model` is. A route
// of the other wire than the client's gets the request translated (wire-crossing.ts), with its own key header.
import { ApiError } from "../errors";
import { DEFAULT_ANTHROPIC_VERSION } from "../llm/anthropic-chat-model";
import { ModelError, type ModelErrorCode } from "../llm/chat-model";
import { classifyUpstreamError, upstreamWords } from "../llm/upstream-error";
import type { AdminLogger } from "../observability/admin-logger";
import { type CircuitBreaker, isolateBreaker } from "../routing/circuit-breaker";
import type { ModelRoute } from "../routing/model-routes";
import { type RouteAttempt, walkChain } from "../routing/route-chain-walker";
import { routeFetch } from "../routing/route-models";
import type { RouteKeys, RouteTable } from "../routing/route-table";
import { type UpstreamExchange, UpstreamTimeout } from "./exchange";
import { upstreamRequestHeaders } from "./headers";
import type { PassthroughRequest } from "./request-body";
import { type WireBodies, wireOf } from "./wire-crossing";

/** Where a request goes: the routes to try, in order, and whether its body names one (its `model` is rewritten). */
export interface PassthroughRouting {
  first: ModelRoute;
  chain: ModelRoute[];
  rewritesModel: boolean;
}

export function routingFor(table: RouteTable, request: PassthroughRequest | null): PassthroughRouting {
  const named = request ? table.get(request.model) : null;
  if (!named) return { first: table.fallback, chain: [table.fallback], rewritesModel: false };
  return { first: named, chain: table.chain(named.name), rewritesModel: true };
}

/**
 * The chain without the fallbacks whose wire cannot carry the request (logged). The first route's refusal is the
 * client's: a 400 naming the param, before any upstream is called.
 */
export function routesCarrying(
  bodies: WireBodies,
  routing: PassthroughRouting,
  logger: AdminLogger,
): PassthroughRouting {
  const first = bodies.for(wireOf(routing.first));
  if (first && !first.ok) throw new ApiError("invalid_request", first.message, { param: first.param });
  const chain = routing.chain.filter((route) => {
    const body = route === routing.first ? null : bodies.for(wireOf(route));
    if (!body || body.ok) return true;
    logger.addCustomEvent("Warning", "[passthrough_wire_skip]", `${body.param}: ${body.message}`, [
      ["Route", route.name],
    ]);
    return false;
  });
  return { ...routing, chain };
}

/** What the walk did so far: the route answering (or being tried) now, the ones that failed, a commitment. */
export interface ChainState {
  route: ModelRoute;
  failed: string[];
  /** The attempts that failed over, for the meter's rows. */
  attempts: RouteAttempt[];
  /** The client already has a 200 (a stream committed early): no other route may answer any more. */
  committed: boolean;
}

const encoder = new TextEncoder();
/** A status that says it all: no body is read to classify it. */
const NO_WORDS = { code: null, type: null, message: null };

/**
 * The body in the route's wire with `model` set to the route's and, for an OpenAI stream the meter must see the
 * usage of, `stream_options.include_usage` on; every other field as it was written. Otherwise its bytes, untouched.
 */
function bodyFor(
  route: ModelRoute,
  bytes: ArrayBuffer | Uint8Array,
  rewritesModel: boolean,
  askUsage: boolean,
): ArrayBuffer | Uint8Array {
  if (!rewritesModel && !askUsage) return bytes;
  const body = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  if (rewritesModel) body.model = route.model;
  if (askUsage) {
    const options = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
    body.stream_options = { ...options, include_usage: true };
  }
  return encoder.encode(JSON.stringify(body));
}

/**
 * What a route is sent: GET `path` without a request; else the request's body in the route's wire (wire-crossing.ts).
 * A route whose wire the request cannot reach cannot serve it, as a route whose secret is missing cannot.
 */
function upstreamCall(
  route: ModelRoute,
  options: ChainOptions,
): { path: string; body: ArrayBuffer | Uint8Array | null } {
  if (!options.bodies) return { path: options.path, body: null };
  const wire = wireOf(route);
  const sent = options.bodies.for(wire);
  if (!sent?.ok) {
    const why = sent && !sent.ok ? `: ${sent.param}: ${sent.message}` : "";
    throw new ModelError(
      "model_unavailable",
      `model route '${route.name}' (${route.provider}) cannot serve ${options.path}${why}`,
    );
  }
  const askUsage = options.askUsage && wire === "openai";
  return { path: sent.value.path, body: bodyFor(route, sent.value.bytes, options.routing.rewritesModel, askUsage) };
}

export interface ChainOptions {
  env: object;
  /** The keys of the routes (the org's route table). */
  keys: RouteKeys;
  routing: PassthroughRouting;
  /** The client's path after /v1. */
  path: string;
  /** The request's body for each wire; null for a GET (/models). */
  bodies: WireBodies | null;
  /** Ask an OpenAI stream's upstream for its usage (the client did not). */
  askUsage: boolean;
  incoming: Headers;
  /** The request's trace context (`traceparent`, `tracestate`) for the upstream; {} when tracing is off. */
  trace: Readonly<Record<string, string>>;
  requestId: string;
  exchange: UpstreamExchange;
  state: ChainState;
  breaker?: CircuitBreaker;
  breakerOptions: { failures: number; cooldownMs: number };
  logger: AdminLogger;
  /** Takes the secrets in play out of the runtime's words before they are logged (they can quote the upstream's URL). */
  redact: (text: string) => string;
}

/**
 * An answer that is the route's failure, not the request's (docs/errors.md#failover): busy or broken (429, 5xx), its
 * key refused (401, 403), or (when the route names the model) a model its upstream does not have. These fail over;
 * the answer is our cause for it, null when the answer is not the route's failure.
 */
async function routeFailure(response: Response, routeNamesModel: boolean): Promise<ModelErrorCode | null> {
  const { status } = response;
  if (status === 429 || status >= 500 || status === 401 || status === 403) {
    return classifyUpstreamError(status, NO_WORDS);
  }
  if (status !== 404 || !routeNamesModel) return null;
  const text = await response
    .clone()
    .text()
    .catch(() => "");
  return classifyUpstreamError(status, upstreamWords(text)) === "model_not_found" ? "model_not_found" : null;
}

/** Our cause for a thrown attempt: the route's own timeout, or the route being unreachable or unusable. */
function failureOf(error: unknown, redact: (text: string) => string): { code: ModelErrorCode; detail: string } {
  if (error instanceof ModelError) return { code: error.code, detail: redact(error.detail) };
  if (error instanceof UpstreamTimeout) return { code: "model_timeout", detail: error.message };
  return { code: "model_unavailable", detail: redact(error instanceof Error ? error.message : String(error)) };
}

/**
 * The first answer of the chain that is not a route failure, or the last route's answer (or error) when every
 * route failed. `state.route` names the route of the answer.
 */
export async function sendThroughChain(options: ChainOptions): Promise<Response> {
  const { routing, state, exchange, logger } = options;
  const walk = {
    breaker: options.breaker ?? isolateBreaker,
    breakerOptions: options.breakerOptions,
    logger,
    onAttempt: (attempt: RouteAttempt) => state.attempts.push(attempt),
    onFailover: (from: ModelRoute) => state.failed.push(from.name),
  };
  return walkChain<Response>(routing.chain, walk, async (route) => {
    state.route = route;
    const startedAt = Date.now();
    // Its own timeout (a stored route's `timeoutMs`) ends this attempt only; the exchange's clock covers them all.
    // Without one, the attempt is the exchange's: its signal is the exchange's own.
    const timeoutMs = route.source === "stored" ? route.timeoutMs : null;
    const own = timeoutMs !== null ? ownClock(exchange.signal, timeoutMs) : null;
    const signal = own?.signal ?? exchange.signal;
    const failed = (cause: { code: ModelErrorCode; detail: string }) => ({
      ...cause,
      latencyMs: Date.now() - startedAt,
      answerChars: 0,
      // The client already has a 200: the route being tried is the one that answers, whatever it does.
      final: state.committed,
    });
    try {
      const send = routeFetch(route, options.env, options.keys);
      const call = upstreamCall(route, options);
      const credentials = {
        apiKey: options.keys.keyOf(route) ?? "",
        anthropicVersion: wireOf(route) === "anthropic" ? (route.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION) : null,
      };
      const response = await send(call.path, {
        method: call.body ? "POST" : "GET",
        headers: upstreamRequestHeaders(options.incoming, credentials, options.requestId, options.trace),
        body: call.body,
        signal,
      });
      const code = await routeFailure(response, options.routing.rewritesModel && options.bodies !== null);
      if (code === null) {
        // The answer's body is still to come: the exchange's clock and a client that leaves must still stop it.
        own?.keepLinked();
        return { answered: response };
      }
      return {
        failed: failed({ code, detail: `HTTP ${response.status}` }),
        // The last route's failure is the client's answer; one the walk moves past is let go.
        giveUp: () => response,
        letGo: async () => response.body?.cancel().catch(() => {}),
      };
    } catch (error) {
      if (exchange.signal.aborted) throw exchange.signal.reason;
      return {
        failed: failed(failureOf(error, options.redact)),
        giveUp: () => {
          throw error;
        },
      };
    } finally {
      own?.done();
    }
  });
}

/**
 * An attempt's own clock: a signal that its timeout aborts, and that follows the exchange's (an abort of the whole
 * exchange ends the attempt too). `done` clears the timer and, unless an answer's body still comes through this
 * signal (`keepLinked`), unlinks it from the exchange.
 */
function ownClock(exchangeSignal: AbortSignal, timeoutMs: number) {
  const controller = new AbortController();
  let linked = false;
  const onAbort = () => controller.abort(exchangeSignal.reason);
  exchangeSignal.addEventListener("abort", onAbort, { once: true });
  // An exchange already aborted (a client gone before this attempt) fires no event: the attempt starts aborted.
  if (exchangeSignal.aborted) onAbort();
  const timer = setTimeout(() => controller.abort(new UpstreamTimeout("first_byte", timeoutMs)), timeoutMs);
  return {
    signal: controller.signal,
    keepLinked: () => {
      linked = true;
    },
    done: () => {
      clearTimeout(timer);
      if (!linked) exchangeSignal.removeEventListener("abort", onAbort);
    },
  };
}

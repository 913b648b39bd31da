// The OpenAI-compatible passthrough (design decision 4): /v1/models and the /v1 generation endpoints
// forward the client's own request, system prompt untouched, to the upstream LLM, with our key. `forward` is the
// one path of every passthrough request, the Messages wire's too (messages.ts), on routes of either wire.

import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { type AppBindings, type AppContext, BEARER, errors, jsonBody, requireJsonBody, routes } from "../http";
import { ModelError } from "../llm/chat-model";
import type { AdminLogger } from "../observability/admin-logger";
import { traceCarrier } from "../observability/tracing/tracing";
import { envRouteTable } from "../routing/env-router";
import { redactedError, StreamScrubber, scrubWhole, secretRedactor } from "../secret-redaction";
import { type Settings, settings } from "../settings";
import { isEventStream } from "./answer-as-message";
import { ClientGone, settleWithin, UpstreamExchange } from "./exchange";
import { clientResponseHeaders, eventStreamHeaders } from "./headers";
import { MeteredRequest } from "./metered-request";
import { PassthroughGuard } from "./passthrough-guard";
import { passthroughRateLimit } from "./rate-limit";
import { type PassthroughRequest, parsePassthroughBody } from "./request-body";
import { type ChainState, routesCarrying, routingFor, sendThroughChain } from "./route-chain";
import { relayEventStream } from "./sse-pipe";
import { streamFramesOf } from "./stream-frames";
import { credentialsOf, routeHeaders, upstreamErrorResponse, upstreamFailure } from "./upstream-errors";
import { SseUsageScanner, usageOfJson } from "./usage";
import { UsageHoldback } from "./usage-holdback";
import { WireBodies, wireOf } from "./wire-crossing";

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
const decoder = new TextDecoder();

/**
 * An upstream that failed is the operator's to know about: logged with the request id, never shown whole, and with
 * the secrets in play taken out of the runtime's words, its stack's too (they can quote the upstream's URL).
 */
function logUpstreamFailure(c: AppContext, error: unknown, redact: (text: string) => string): void {
  // A model's failure (a Workers AI stream that broke) says what happened in its detail, not its fixed message.
  const detail: [string, string][] = error instanceof ModelError ? [["detail", redact(error.detail)]] : [];
  c.get("logger").addException("[passthrough_upstream]", redactedError(error, redact), [
    ["path", c.req.path],
    ...detail,
  ]);
}

/** What an upstream's words pass through before a client or a log sees them: the secrets in play taken out. */
interface Redaction {
  /** For an error's text: every secret the Worker knows and the org's keys in play. */
  text: (text: string) => string;
  /** The keys the request's routes send, for the answer's bytes (an upstream may echo what it was sent). */
  keys: readonly string[];
}

/** A whole (non-streamed) answer: read within the idle limit, mirrored with its status and the route's headers. */
async function answerJson(
  exchange: UpstreamExchange,
  response: Response,
  config: Settings["passthrough"],
  state: ChainState,
  metered: MeteredRequest | null,
  logger: AdminLogger,
  redaction: Redaction,
  keepBytes: (bytes: ArrayBuffer | Uint8Array) => void,
): Promise<Response> {
  exchange.arm("idle", config.idleTimeoutMs);
  const raw = await exchange.race(response.arrayBuffer());
  exchange.disarm();
  const withRoute = (headers: Headers) => {
    for (const [name, value] of Object.entries(routeHeaders(state))) headers.set(name, value);
    return headers;
  };
  metered?.upstreamStatus(response.status);
  if (!response.ok) {
    metered?.end(state, "error", null, null);
    const error = upstreamErrorResponse(response, decoder.decode(raw), {
      logger,
      redact: redaction.text,
      credentials: credentialsOf(state.route),
      route: state.route.name,
    });
    withRoute(error.headers);
    return error;
  }
  const bytes = scrubWhole(raw, redaction.keys);
  keepBytes(bytes);
  metered?.end(state, "ok", usageOfJson(bytes), bytes.byteLength);
  const status = response.status as ContentfulStatusCode;
  return new Response(NULL_BODY_STATUSES.has(status) ? null : bytes, {
    status,
    headers: withRoute(clientResponseHeaders(response.headers)),
  });
}

/** The endpoints whose streams report usage only when asked (`stream_options.include_usage`). */
const ASKS_FOR_USAGE = new Set(["/chat/completions", "/completions"]);

/** How `forward` treats a request that is not a model call. */
export interface ForwardOptions {
  /**
   * A call that generates nothing (count_tokens): sent to the named route alone, outside the key's model call
   * limit, the org's budget and the usage rows.
   */
  uncounted?: boolean;
}

/**
 * One passthrough request through the route chain: the model call limit and the meter's reservation, the upstream
 * call (with failover), usage rows; the answer mirrored (JSON, or the event stream relayed). Each route is sent
 * the request in its own wire (wire-crossing.ts: relayed on the client's wire, translated on the other), and an
 * answer from a route of the other wire is translated back to the client's.
 */
export async function forward(
  c: AppContext,
  path: string,
  request: PassthroughRequest | null,
  options: ForwardOptions = {},
): Promise<Response> {
  // The org's passthrough guardrails (passthrough-guard.ts): the only change to a client's prompt we ever make.
  const guard = await PassthroughGuard.of(c, path, request);
  if (!guard || !request) return relay(c, path, request, options, null);
  const checked = await guard.input(request);
  try {
    return await guard.output(await relay(c, path, checked, options, guard));
  } catch (error) {
    guard.done();
    throw error;
  }
}

/** `forward` past the guardrails: the request as it goes upstream, the answer in the client's wire. */
async function relay(
  c: AppContext,
  path: string,
  request: PassthroughRequest | null,
  options: ForwardOptions,
  guard: PassthroughGuard | null,
): Promise<Response> {
  const all = settings(c.env);
  const config = all.passthrough;
  // The caller's org's routes: its own and the deployment's (another org's are never found by name).
  const table = await envRouteTable(c.env, c.get("principal").org, c.get("logger"));
  const named = routingFor(table, request);
  const bodies = request ? new WireBodies(path, request) : null;
  const sole = options.uncounted ? { ...named, chain: [named.first] } : named;
  const routing = bodies ? routesCarrying(bodies, sole, c.get("logger")) : sole;
  const keys = table.keysOf(routing.chain);
  // Made only when an upstream answers an error: a request that goes well never pays for it.
  let redactor: ((text: string) => string) | undefined;
  const redact = (text: string) => {
    redactor ??= secretRedactor(c.env, keys);
    return redactor(text);
  };
  const redaction: Redaction = { text: redact, keys };
  const metered = request && !options.uncounted ? await MeteredRequest.admit(c, request, routing) : null;
  const state: ChainState = { route: routing.first, failed: [], attempts: [], committed: false };
  // A stream whose client did not ask for its usage is asked for it upstream; the relay takes the difference back.
  const holdback =
    request?.stream && !request.includeUsage && ASKS_FOR_USAGE.has(path) ? new UsageHoldback() : undefined;
  const exchange = new UpstreamExchange(Math.min(config.firstByteTimeoutMs, config.idleTimeoutMs));
  exchange.arm("first_byte", config.firstByteTimeoutMs);
  // A client that leaves at any point (even before the upstream's headers) stops the upstream request.
  const clientSignal = c.req.raw.signal;
  if (clientSignal.aborted) exchange.abort(new ClientGone());
  else clientSignal.addEventListener("abort", () => exchange.abort(new ClientGone()), { once: true });
  // The upstream call carries the trace context of the request's span (of the server span, for an uncounted one).
  const traced = metered?.traced(path) ?? null;
  // The decisions go on the request's span (the input's so far, the output's to come); it ends after the last.
  guard?.attach(metered);
  const upstream = exchange.race(
    sendThroughChain({
      env: c.env,
      keys: table,
      routing,
      path,
      bodies,
      askUsage: holdback !== undefined,
      incoming: c.req.raw.headers,
      trace: traced ? traceCarrier(traced) : traceCarrier(),
      requestId: c.get("requestId"),
      exchange,
      state,
      breakerOptions: { failures: all.routing.breakerFailures, cooldownMs: all.routing.breakerCooldownMs },
      logger: c.get("logger"),
      redact,
    }),
  );
  let answer: Response;
  // A whole JSON answer's bytes, for the guardrails to read without reading the answer's body again.
  let answerBytes: ArrayBuffer | Uint8Array | null = null;
  try {
    // A stream waits one keepalive interval for the upstream's headers. If they come, their status is mirrored;
    // if not, it commits to a 200 event stream now and keeps the client's connection alive.
    const early = request?.stream ? await settleWithin(upstream, config.keepaliveMs) : null;
    if (!early || (early.settled && (!early.value.ok || !isEventStream(early.value)))) {
      answer = await answerJson(
        exchange,
        early?.settled ? early.value : await upstream,
        config,
        state,
        metered,
        c.get("logger"),
        redaction,
        (bytes) => {
          answerBytes = bytes;
        },
      );
    } else {
      // From here the client has a 200: the route being tried is the one that answers, whatever it does.
      state.committed = true;
      if (early.settled) metered?.upstreamStatus(early.value.status);
      const wire = wireOf(state.route);
      const scanner = new SseUsageScanner();
      const relay = relayEventStream({
        exchange,
        upstream,
        keepaliveNow: !early.settled,
        keepaliveMs: config.keepaliveMs,
        idleTimeoutMs: config.idleTimeoutMs,
        routes: () => state,
        frames: streamFramesOf(wire),
        scrubber: new StreamScrubber(redaction.keys),
        redact: redaction.text,
        // What asking for usage changed is only in an OpenAI stream: an Anthropic one always reports its usage.
        ...(holdback && wire === "openai" ? { holdback } : {}),
        onChunk: (chunk) => scanner.push(chunk),
        onFailure: (failure) => logUpstreamFailure(c, failure, redaction.text),
        logger: c.get("logger"),
      });
      c.executionCtx.waitUntil(
        relay.done.then((outcome) => {
          const cut = outcome !== "complete";
          const answered = scanner.usage !== null || scanner.answerChars > 0;
          metered?.end(
            state,
            cut ? (answered ? "partial" : "error") : "ok",
            scanner.usage,
            answered ? scanner.answerChars : null,
          );
        }),
      );
      const headers = eventStreamHeaders(early.settled ? early.value.headers : undefined);
      for (const [name, value] of Object.entries(routeHeaders(state))) headers.set(name, value);
      answer = new Response(relay.body, { status: 200, headers });
    }
  } catch (error) {
    exchange.abort(error);
    metered?.end(state, "error", null, null);
    if (!(error instanceof ClientGone)) logUpstreamFailure(c, error, redaction.text);
    throw upstreamFailure(error, state);
  }
  // An answer on the client's own wire goes through the guardrails from its bytes; a translated one in forward().
  if (guard && answerBytes && answer.ok && request && wireOf(state.route) === request.wire) {
    return guard.jsonAnswer(answer, answerBytes);
  }
  return bodies ? await bodies.answer(answer, wireOf(state.route)) : answer;
}

async function forwardBody(c: AppContext, path: string): Promise<Response> {
  // Only the header is read: the bytes still go upstream as the client wrote them.
  requireJsonBody(c);
  return forward(c, path, parsePassthroughBody(await c.req.arrayBuffer()));
}

/** GET /v1/models counts as a call on the key's limit; a generation request is admitted in `forward` (limit and budget). */
export const guards = [requireScope("chat"), passthroughRateLimit] as const;
export const generationGuards = [requireScope("chat")] as const;

/**
 * The passthrough's routes in /openapi.json. They are declared for the document only: their bodies must
 * reach the upstream byte for byte, so no validator may read (and re-serialise) them first.
 */
function describe(app: OpenAPIHono<AppBindings>): OpenAPIHono<AppBindings> {
  const answer = {
    200: { description: "The upstream's answer, as it sent it (JSON, or an event stream with `stream: true`)." },
    ...errors(400, 401, 403, 404, 429, 502, 504),
  };
  const generation = { ...answer, ...errors(415) };
  const body = jsonBody(
    z.looseObject({ model: z.string(), stream: z.boolean().optional() }).meta({
      description: "The client's own request, forwarded unchanged; only `model` and `stream` are checked.",
    }),
    "An OpenAI request body.",
  );
  const registry = app.openAPIRegistry;
  const tags = ["passthrough"];
  registry.registerPath({
    method: "get",
    path: "/v1/models",
    tags,
    security: BEARER,
    summary: "The upstream's models, then the model routes your organization may name as `model`",
    responses: answer,
  });
  registry.registerPath({
    method: "get",
    path: "/v1/models/{model}",
    tags,
    security: BEARER,
    summary: "One of the upstream's models",
    request: { params: z.object({ model: z.string() }) },
    responses: answer,
  });
  for (const path of ["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"]) {
    registry.registerPath({
      method: "post",
      path,
      tags,
      security: BEARER,
      summary: `Forwarded to the upstream's ${path.slice(3)} (the OpenAI-compatible passthrough)`,
      request: body,
      responses: generation,
    });
  }
  return app;
}

/** An OpenAI model list (what /v1/models answers), as far as it is read here. */
const ModelList = z.looseObject({ object: z.literal("list"), data: z.array(z.looseObject({ id: z.string() })) });

/**
 * GET /v1/models: the upstream's models, then the stored model routes the caller's org may name as `model` (the
 * deployment's and its own; never another org's), each as a model owned by `aptix` or by the org.
 */
async function modelsWithRoutes(c: AppContext): Promise<Response> {
  const answer = await forward(c, "/models", null);
  if (!answer.ok) return answer;
  const parsed = ModelList.safeParse(
    await answer
      .clone()
      .json()
      .catch(() => null),
  );
  if (!parsed.success) return answer;
  const table = await envRouteTable(c.env, c.get("principal").org, c.get("logger"));
  const listed = new Set(parsed.data.data.map((m) => m.id));
  const routes = table
    .stored()
    .filter((route) => !listed.has(route.name))
    .map((route) => ({
      id: route.name,
      object: "model",
      created: Math.floor(Date.parse(route.createdAt ?? "") / 1000) || 0,
      owned_by: route.org ?? "aptix",
    }));
  const headers = new Headers(answer.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify({ ...parsed.data, data: [...parsed.data.data, ...routes] }), {
    status: answer.status,
    headers,
  });
}

// Middleware is attached per route, not with use("/v1/*"): that would also guard the other /v1 routes.
export const passthroughRoutes = describe(routes())
  .get("/v1/models", ...guards, modelsWithRoutes)
  .get("/v1/models/:model", ...guards, (c) => forward(c, `/models/${encodeURIComponent(c.req.param("model"))}`, null))
  .post("/v1/chat/completions", ...generationGuards, (c) => forwardBody(c, "/chat/completions"))
  .post("/v1/completions", ...generationGuards, (c) => forwardBody(c, "/completions"))
  .post("/v1/embeddings", ...generationGuards, (c) => forwardBody(c, "/embeddings"))
  .post("/v1/responses", ...generationGuards, (c) => forwardBody(c, "/responses"));

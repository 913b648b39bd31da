// The OpenAI-compatible passthrough (design decision 4): /v1/models and the /v1 generation endpoints
// forward the client's own request, system prompt untouched, to the upstream LLM, with our key.
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { type AppBindings, type AppContext, BEARER, errors, jsonBody, routes } from "../http";
import { envRouteTable } from "../routing/env-router";
import type { ModelRoute } from "../routing/model-routes";
import { type Settings, settings } from "../settings";
import { ClientGone, settleWithin, UpstreamExchange } from "./exchange";
import { clientResponseHeaders, eventStreamHeaders } from "./headers";
import { passthroughRateLimit } from "./rate-limit";
import { type PassthroughRequest, parsePassthroughBody } from "./request-body";
import { type ChainState, type PassthroughRouting, routingFor, sendThroughChain } from "./route-chain";
import { relayEventStream } from "./sse-pipe";
import { credentialsOf, routeHeaders, upstreamErrorResponse, upstreamFailure } from "./upstream-errors";
import { recordUsage, SseUsageScanner, type TokenUsage, usageOfJson } from "./usage";

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);
const decoder = new TextDecoder();

/** An upstream that failed is the operator's to know about: logged with the request id, never shown whole. */
function logUpstreamFailure(c: AppContext, error: unknown): void {
  c.var.logger.addException("[passthrough_upstream]", error, [["path", c.req.path]]);
}

/**
 * Writes the usage row (if the upstream reported any) once the response is on its way: it yields to
 * the event loop before reading the usage, so even a large JSON answer is parsed after it was sent.
 * A failed write is logged, never thrown.
 */
async function writeUsage(c: AppContext, served: Served, readUsage: () => TokenUsage | null): Promise<void> {
  // The offline demo's token counts are estimates of no one's bill: not recorded.
  if (served.route.provider === "offline_demo") return;
  await new Promise((resolve) => setTimeout(resolve, 0));
  const usage = readUsage();
  if (!usage) return;
  const { org, keyId } = c.var.principal;
  try {
    await recordUsage(c.env.DB, {
      org,
      keyId,
      endpoint: c.req.path,
      route: served.route.name,
      model: served.model,
      ...usage,
    });
  } catch (error) {
    c.var.logger.addException("[passthrough_usage]", error);
  }
}

/** The route that answered, and the model it sent upstream (the route's, or the client's own for `default`). */
interface Served {
  route: ModelRoute;
  model: string;
}

function served(state: ChainState, routing: PassthroughRouting, request: PassthroughRequest | null): Served {
  // `default` forwards the client's `model` to an OpenAI-compatible upstream; Workers AI runs the route's.
  const clients = !routing.rewritesModel && request && state.route.provider === "openai_compatible";
  return { route: state.route, model: clients ? request.model : state.route.model };
}

/** A whole (non-streamed) answer: read within the idle limit, mirrored with its status and the route's headers. */
async function answerJson(
  c: AppContext,
  exchange: UpstreamExchange,
  response: Response,
  config: Settings["passthrough"],
  request: PassthroughRequest | null,
  answered: Served & { headers: Record<string, string> },
): Promise<Response> {
  exchange.arm("idle", config.idleTimeoutMs);
  const bytes = await exchange.race(response.arrayBuffer());
  exchange.disarm();
  const withRoute = (headers: Headers) => {
    for (const [name, value] of Object.entries(answered.headers)) headers.set(name, value);
    return headers;
  };
  if (!response.ok) {
    const error = upstreamErrorResponse(response, decoder.decode(bytes), credentialsOf(answered.route));
    withRoute(error.headers);
    return error;
  }
  // After the response, off the client's path.
  if (request) c.executionCtx.waitUntil(writeUsage(c, answered, () => usageOfJson(bytes)));
  const status = response.status as ContentfulStatusCode;
  return new Response(NULL_BODY_STATUSES.has(status) ? null : bytes, {
    status,
    headers: withRoute(clientResponseHeaders(response.headers)),
  });
}

function isEventStream(response: Response): boolean {
  return response.headers.get("content-type")?.startsWith("text/event-stream") ?? false;
}

async function forward(c: AppContext, path: string, request: PassthroughRequest | null): Promise<Response> {
  const all = settings(c.env);
  const config = all.passthrough;
  const routing = routingFor(await envRouteTable(c.env, c.var.logger), request);
  const state: ChainState = { route: routing.first, failed: [], committed: false };
  const exchange = new UpstreamExchange();
  exchange.arm("first_byte", config.firstByteTimeoutMs);
  // A client that leaves at any point (even before the upstream's headers) stops the upstream request.
  const clientSignal = c.req.raw.signal;
  if (clientSignal.aborted) exchange.abort(new ClientGone());
  else clientSignal.addEventListener("abort", () => exchange.abort(new ClientGone()), { once: true });
  const upstream = exchange.race(
    sendThroughChain({
      env: c.env,
      routing,
      path,
      request,
      incoming: c.req.raw.headers,
      requestId: c.var.requestId,
      exchange,
      state,
      breakerOptions: { failures: all.routing.breakerFailures, cooldownMs: all.routing.breakerCooldownMs },
      logger: c.var.logger,
    }),
  );
  const answered = () => ({ ...served(state, routing, request), headers: routeHeaders(state) });
  try {
    if (!request?.stream) {
      const response = await upstream;
      return await answerJson(c, exchange, response, config, request, answered());
    }

    // A stream: wait one keepalive interval for the upstream's headers. If they come, mirror their
    // status; if not, commit to a 200 event stream now and keep the client's connection alive.
    const early = await settleWithin(upstream, config.keepaliveMs);
    if (early.settled && (!early.value.ok || !isEventStream(early.value))) {
      return await answerJson(c, exchange, early.value, config, request, answered());
    }
    // From here the client has a 200: the route being tried is the one that answers, whatever it does.
    state.committed = true;
    const scanner = new SseUsageScanner();
    const relay = relayEventStream({
      exchange,
      upstream,
      keepaliveNow: !early.settled,
      keepaliveMs: config.keepaliveMs,
      idleTimeoutMs: config.idleTimeoutMs,
      routes: () => state,
      onChunk: (chunk) => scanner.push(chunk),
      onFailure: (failure) => logUpstreamFailure(c, failure),
    });
    c.executionCtx.waitUntil(
      relay.done.then(() => writeUsage(c, served(state, routing, request), () => scanner.usage)),
    );
    const headers = eventStreamHeaders(early.settled ? early.value.headers : undefined);
    for (const [name, value] of Object.entries(routeHeaders(state))) headers.set(name, value);
    return new Response(relay.body, { status: 200, headers });
  } catch (error) {
    exchange.abort(error);
    if (!(error instanceof ClientGone)) logUpstreamFailure(c, error);
    throw upstreamFailure(error, state);
  }
}

async function forwardBody(c: AppContext, path: string): Promise<Response> {
  return forward(c, path, parsePassthroughBody(await c.req.arrayBuffer()));
}

const guards = [requireScope("chat"), passthroughRateLimit] as const;

/**
 * The passthrough's routes in /openapi.json. They are declared for the document only: their bodies must
 * reach the upstream byte for byte, so no validator may read (and re-serialise) them first.
 */
function describe(app: OpenAPIHono<AppBindings>): OpenAPIHono<AppBindings> {
  const answer = {
    200: { description: "The upstream's answer, as it sent it (JSON, or an event stream with `stream: true`)." },
    ...errors(400, 401, 403, 404, 429, 502, 504),
  };
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
    summary: "The upstream's models",
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
      responses: answer,
    });
  }
  return app;
}

// Middleware is attached per route, not with use("/v1/*"): that would also guard the other /v1 routes.
export const passthroughRoutes = describe(routes())
  .get("/v1/models", ...guards, (c) => forward(c, "/models", null))
  .get("/v1/models/:model", ...guards, (c) => forward(c, `/models/${encodeURIComponent(c.req.param("model"))}`, null))
  .post("/v1/chat/completions", ...guards, (c) => forwardBody(c, "/chat/completions"))
  .post("/v1/completions", ...guards, (c) => forwardBody(c, "/completions"))
  .post("/v1/embeddings", ...guards, (c) => forwardBody(c, "/embeddings"))
  .post("/v1/responses", ...guards, (c) => forwardBody(c, "/responses"));

// The passthrough on Anthropic's Messages wire (issue 28): POST /v1/messages and /v1/messages/count_tokens for
// clients whose base URL is ours. A model naming an `anthropic` route is relayed to it byte for byte; a model
// naming an OpenAI-compatible route (or none: `default`) is translated to chat completions (src/translate/) and
// back. Both go the chat completions passthrough's own path (route chain, failover across wires, model call limit,
// meter, usage rows: `forward`). Errors are in Anthropic's shape (anthropic-errors.ts). docs/anthropic.md says more.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { ApiError } from "../errors";
import { type AppBindings, type AppContext, json, jsonBody, parseWith, requireJsonBody, routes } from "../http";
import { envRouteTable } from "../routing/env-router";
import { estimateTokens } from "../token-estimate";
import { messagesToChatRequest } from "../translate/anthropic-to-chat";
import { AnthropicErrorBody, AnthropicMessage, MessagesRequest } from "../wire/anthropic";
import { jsonObjectOf, type PassthroughRequest } from "./request-body";
import { forward, generationGuards } from "./routes";
import { wireOf } from "./wire-crossing";

/** A Messages request, read and translated (for the estimate, and the agent's door); a refusal names the param. */
export function translated(body: MessagesRequest) {
  const chat = messagesToChatRequest(body);
  if (!chat.ok) throw new ApiError("invalid_request", chat.message, { param: chat.param });
  return chat.value;
}

/** The client's bytes (sent upstream as they are but for `model`) and their parse with `schema`. */
async function readRequest<S extends z.ZodType>(
  c: AppContext,
  schema: S,
): Promise<{ bytes: ArrayBuffer; body: z.output<S> }> {
  requireJsonBody(c);
  const bytes = await c.req.arrayBuffer();
  return { bytes, body: parseWith(schema, jsonObjectOf(bytes), "request body") };
}

/** The body as `schema` reads it: JSON only, a zod failure naming the field (the agent's Messages door reads it so too). */
export async function readBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<z.output<S>> {
  return (await readRequest(c, schema)).body;
}

/**
 * A model naming an `anthropic` route is relayed to it byte for byte (only `model` set to the route's); any other
 * route gets it translated to chat completions and answers through the translation back (wire-crossing.ts). Every
 * request goes the chat completions passthrough's way (`forward`): the route chain and failover across both wires,
 * the model call limit, the meter, usage rows.
 */
async function messages(c: AppContext): Promise<Response> {
  const { bytes, body } = await readRequest(c, MessagesRequest);
  const request: PassthroughRequest = {
    bytes,
    wire: "anthropic",
    model: body.model,
    stream: body.stream === true,
    maxTokens: body.max_tokens,
    // An Anthropic stream always reports its usage, and the translation to chat completions asks for it.
    includeUsage: true,
    messages: body,
  };
  return forward(c, "/messages", request);
}

/** count_tokens takes a Messages request without `max_tokens`. */
export const CountTokensRequest = MessagesRequest.extend({ max_tokens: MessagesRequest.shape.max_tokens.optional() });

/**
 * The request's input tokens as the repo's one estimate (src/token-estimate.ts) reads the translated chat request:
 * an estimate, not a tokenizer's count, for every route that is not an Anthropic one (and for the agent's Messages
 * door, POST /agent/v1/messages/count_tokens).
 */
function estimatedCount(c: AppContext, body: z.output<typeof CountTokensRequest>): Response {
  const { messages: chatMessages, tools } = translated({ ...body, max_tokens: body.max_tokens ?? 1, stream: false });
  return c.json({ input_tokens: estimateTokens(JSON.stringify({ messages: chatMessages, tools: tools ?? [] })) });
}

/** The estimate of a count_tokens request (the agent's Messages door answers its count_tokens with it). */
export async function countTokens(c: AppContext): Promise<Response> {
  return estimatedCount(c, await readBody(c, CountTokensRequest));
}

/**
 * POST /v1/messages/count_tokens: on an `anthropic` route, the upstream's own count (the request relayed to its
 * /v1/messages/count_tokens, outside the model call limit and the meter); on any other route, the estimate.
 */
async function countTokensOnRoute(c: AppContext): Promise<Response> {
  const { bytes, body } = await readRequest(c, CountTokensRequest);
  const route = (await envRouteTable(c.env, c.get("principal").org, c.get("logger"))).get(body.model);
  if (!route || wireOf(route) !== "anthropic") return estimatedCount(c, body);
  const request: PassthroughRequest = {
    bytes,
    wire: "anthropic",
    model: body.model,
    stream: false,
    maxTokens: null,
    includeUsage: false,
  };
  return forward(c, "/messages/count_tokens", request, { uncounted: true });
}

/** An error answer of the Messages wire in /openapi.json. */
export const anthropicError = (description: string) => json(AnthropicErrorBody, description);

/** The refusals every Messages wire route can answer, in /openapi.json. */
export const MESSAGES_FAILURES = {
  400: anthropicError("The request is wrong; the message starts with the field (`invalid_request_error`)."),
  401: anthropicError("No key, or an unknown or revoked key (`authentication_error`)."),
  403: anthropicError("The key lacks the `chat` scope (`permission_error`)."),
  415: anthropicError("The body is not sent as JSON."),
};

/** The Messages wire takes our key as a bearer token or as `x-api-key`, as Anthropic's clients send it. */
export const MESSAGES_SECURITY: { [scheme: string]: string[] }[] = [
  { bearer: [] },
  { anthropicApiKey: [] },
  { browserSession: [] },
];

/** Both routes in /openapi.json; their bodies are read by the route (errors in Anthropic's shape), not a validator. */
function describe(app: OpenAPIHono<AppBindings>): OpenAPIHono<AppBindings> {
  const failures = MESSAGES_FAILURES;
  const upstreamFailures = {
    429: anthropicError("The key's model call limit or the org's budget is spent (`rate_limit_error`)."),
    502: anthropicError("The upstream LLM failed (`api_error`)."),
    504: anthropicError("The upstream LLM was too slow (`timeout_error`)."),
  };
  const security = MESSAGES_SECURITY;
  const tags = ["passthrough"];
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/v1/messages",
    tags,
    security,
    summary: "Anthropic's Messages API: relayed to an anthropic model route, translated for any other route",
    request: jsonBody(MessagesRequest, "An Anthropic Messages API request."),
    responses: {
      200: json(AnthropicMessage, "The answer as a Messages API message (an event stream with `stream: true`)."),
      ...failures,
      ...upstreamFailures,
    },
  });
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/v1/messages/count_tokens",
    tags,
    security,
    summary: "The input tokens of a Messages request (the upstream's count on an anthropic route, else an estimate)",
    request: jsonBody(CountTokensRequest, "A Messages API request; `max_tokens` may be left out."),
    responses: {
      200: json(
        z.object({ input_tokens: z.number().int() }),
        "The input tokens (estimated unless the route is anthropic).",
      ),
      ...failures,
      502: anthropicError("An anthropic route's upstream failed (`api_error`)."),
      504: anthropicError("An anthropic route's upstream was too slow (`timeout_error`)."),
    },
  });
  return app;
}

export const messagesRoutes = describe(routes())
  .post("/v1/messages", ...generationGuards, messages)
  .post("/v1/messages/count_tokens", ...generationGuards, countTokensOnRoute);

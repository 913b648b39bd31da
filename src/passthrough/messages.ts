// The passthrough on Anthropic's Messages wire (issue 28): POST /v1/messages and /v1/messages/count_tokens for
// clients whose base URL is ours. A model naming an OpenAI-compatible route (or none: `default`) is translated to
// chat completions (src/translate/), sent through the chat completions passthrough's own path (route chain, model
// call limit, meter, usage rows: `forward`) and translated back. Errors are in Anthropic's shape
// (anthropic-errors.ts). docs/anthropic.md says what maps to what.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { ApiError } from "../errors";
import { type AppBindings, type AppContext, json, jsonBody, parseWith, requireJsonBody, routes } from "../http";
import { estimateTokens } from "../token-estimate";
import { ChatCompletionIn, chatResponseToMessage, messagesToChatRequest } from "../translate/anthropic-chat";
import { AnthropicErrorBody, AnthropicMessage, MessagesRequest } from "../wire/anthropic";
import { messageEventStream } from "./messages-stream";
import { jsonObjectOf, type PassthroughRequest } from "./request-body";
import { forward, generationGuards } from "./routes";

/** A Messages request, read and translated; a refusal of the translation names the param that cannot be carried. */
export function translated(body: MessagesRequest) {
  const chat = messagesToChatRequest(body);
  if (!chat.ok) throw new ApiError("invalid_request", chat.message, { param: chat.param });
  return chat.value;
}

/** The body as `schema` reads it: JSON only, a zod failure naming the field (the agent's Messages door reads it so too). */
export async function readBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<z.output<S>> {
  requireJsonBody(c);
  return parseWith(schema, jsonObjectOf(await c.req.arrayBuffer()), "request body");
}

/** An upstream answer the translation cannot read: the upstream's fault, answered 502 with the route's headers. */
function unreadable(answer: Response, what: string): ApiError {
  const headers: Record<string, string> = {};
  for (const name of ["x-aptix-route", "x-aptix-route-failed"]) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const route = headers["x-aptix-route"];
  return new ApiError(
    "upstream_invalid_answer",
    `The upstream LLM's answer could not be translated to the Messages API${route ? ` (model route '${route}')` : ""}: ${what}`,
    { headers },
  );
}

async function messages(c: AppContext): Promise<Response> {
  const body = await readBody(c, MessagesRequest);
  // ANTHROPIC ROUTE RELAY (issue 28, left for the `anthropic` provider): a model naming an `anthropic` route is to
  // be relayed here to its upstream byte for byte (no translation), before anything below. Until that provider
  // exists every route is OpenAI-compatible (or Workers AI), and a model that names no route goes to `default`
  // with the client's model, as POST /v1/chat/completions does.
  const chat = translated(body);
  const request: PassthroughRequest = {
    bytes: await new Response(JSON.stringify(chat)).arrayBuffer(),
    model: body.model,
    stream: body.stream === true,
    maxTokens: body.max_tokens,
    // The translation asks a stream for its usage (an Anthropic stream always reports it): nothing to hold back.
    includeUsage: true,
  };
  const answer = await forward(c, "/chat/completions", request);
  // An error answer is mirrored; anthropicErrorShape puts it in Anthropic's shape.
  if (!answer.ok) return answer;
  const headers = new Headers(answer.headers);
  const isStream = headers.get("content-type")?.startsWith("text/event-stream") ?? false;
  if (request.stream) {
    if (!isStream || !answer.body) {
      await answer.body?.cancel();
      throw unreadable(answer, "it answered a stream request without an event stream.");
    }
    return new Response(messageEventStream(answer.body, body.model), { status: 200, headers });
  }
  let value: unknown = null;
  try {
    value = await answer.json();
  } catch {
    throw unreadable(answer, "it is not JSON.");
  }
  const completion = ChatCompletionIn.safeParse(value);
  if (!completion.success) throw unreadable(answer, "it is not a chat completion.");
  const message = chatResponseToMessage(completion.data, body.model);
  if (!message.ok) throw unreadable(answer, `${message.param}: ${message.message}`);
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(message.value), { status: 200, headers });
}

/** count_tokens takes a Messages request without `max_tokens`. */
export const CountTokensRequest = MessagesRequest.extend({ max_tokens: MessagesRequest.shape.max_tokens.optional() });

/**
 * The request's input tokens as the repo's one estimate (src/token-estimate.ts) reads the translated chat request:
 * an estimate, not a tokenizer's count, for every route that is not an Anthropic one (and for the agent's Messages
 * door, POST /agent/v1/messages/count_tokens).
 */
export async function countTokens(c: AppContext): Promise<Response> {
  const body = await readBody(c, CountTokensRequest);
  const { messages: chatMessages, tools } = translated({ ...body, max_tokens: body.max_tokens ?? 1, stream: false });
  return c.json({ input_tokens: estimateTokens(JSON.stringify({ messages: chatMessages, tools: tools ?? [] })) });
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
    summary: "Anthropic's Messages API, translated to the model route's chat completions and back",
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
    summary: "The input tokens of a Messages request (an estimate on routes that are not Anthropic's)",
    request: jsonBody(CountTokensRequest, "A Messages API request; `max_tokens` may be left out."),
    responses: {
      200: json(z.object({ input_tokens: z.number().int() }), "The estimated input tokens."),
      ...failures,
    },
  });
  return app;
}

export const messagesRoutes = describe(routes())
  .post("/v1/messages", ...generationGuards, messages)
  .post("/v1/messages/count_tokens", ...generationGuards, countTokens);

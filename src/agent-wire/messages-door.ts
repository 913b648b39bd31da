// The agent on Anthropic's Messages wire (issue 28): POST /agent/v1/messages translates a Messages request to the
// chat completions request the agent's door answers (runChatTurn: modes as models, sessions by X-Aptix-Session or
// by the resent history, the client's tools, approvals in words) and the door's answer back: a `message`, or with
// `stream: true` Anthropic's events. Errors are in Anthropic's shape (anthropicErrorShape, mounted in app.ts).
// docs/anthropic.md ("The agent on the Messages wire") says what is carried and what is refused.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError, ERROR_CODES, type ErrorCode, type OpenAIErrorBody } from "../errors";
import { type AppBindings, type AppContext, json, jsonBody, routes, zodFailure } from "../http";
import { eventStreamHeaders } from "../passthrough/headers";
import {
  anthropicError,
  CountTokensRequest,
  countTokens,
  MESSAGES_FAILURES,
  MESSAGES_SECURITY,
  readBody,
  translated,
} from "../passthrough/messages";
import { messageEventBytes } from "../passthrough/messages-stream";
import { ChatChunkIn, ChatChunksToMessageEvents } from "../translate/anthropic-chat-stream";
import {
  ChatCompletionIn,
  type ChatRequestOut,
  chatResponseToMessage,
  openAIErrorToAnthropic,
} from "../translate/anthropic-to-chat";
import { AnthropicMessage, type MessageStreamEvent, MessagesRequest } from "../wire/anthropic";
import { firstProblem } from "../zod-issues";
import { runChatTurn, SESSION_HEADER } from "./chat-turn";
import { type DoorStreamItem, doorEventStream } from "./completion";
import { AgentChatBody } from "./transcript";

/** The agent reads text: an image block anywhere is refused with its place in the Messages request. */
function refuseImages(body: MessagesRequest): void {
  for (const [i, message] of body.messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [j, block] of message.content.entries()) {
      if (block.type === "image") {
        throw new ApiError("invalid_request", "An image block cannot be read by the agent, which reads text.", {
          param: `messages[${i}].content[${j}]`,
        });
      }
    }
  }
}

/** A field of the translated chat request, named as the Messages request names it where the two differ. */
const MESSAGES_PARAM: [RegExp, string][] = [
  [/^tools\.(\d+)\.function\.parameters/, "tools.$1.input_schema"],
  [/^tools\.(\d+)\.function\./, "tools.$1."],
];

/** The translated request as the door's body; a zod failure names the field (400), before any session is touched. */
function agentBodyOf(chat: ChatRequestOut): AgentChatBody {
  const parsed = AgentChatBody.safeParse(chat);
  if (parsed.success) return parsed.data;
  const problem = firstProblem(parsed.error);
  const param = MESSAGES_PARAM.reduce((p, [from, to]) => p?.replace(from, to) ?? null, problem.param);
  const where = param?.startsWith("messages") ? "chat completions request it translates to" : "request body";
  throw zodFailure({ ...problem, param }, where);
}

const isErrorCode = (code: string | null): code is ErrorCode => code !== null && Object.hasOwn(ERROR_CODES, code);

/** A status for one of our error codes (an unknown one is a server error). */
function statusOfCode(code: string | null): number {
  return isErrorCode(code) ? ERROR_CODES[code][0] : 500;
}

/** The door's error event as Anthropic's `error` event: its type read from the code's status, the param leading. */
function errorEvent(body: OpenAIErrorBody): MessageStreamEvent {
  return { type: "error", error: openAIErrorToAnthropic(statusOfCode(body.error.code), body).error };
}

/** The door's chunks as Anthropic's event stream (`event: <type>` + `data:`), through the one stream translation. */
function messageEvents(items: AsyncGenerator<DoorStreamItem>, model: string): ReadableStream<Uint8Array> {
  const events = new ChatChunksToMessageEvents({ model });
  let failed = false;
  return doorEventStream(items, {
    write: (item) => {
      if (item.kind === "chunk") return events.push(ChatChunkIn.parse(item.chunk)).map(messageEventBytes);
      // An error item becomes an `error` event, and nothing follows it.
      failed = true;
      return [messageEventBytes(errorEvent(item.body))];
    },
    finish: () => (failed ? [] : events.end().map(messageEventBytes)),
  });
}

async function messages(c: AppContext): Promise<Response> {
  const body = await readBody(c, MessagesRequest);
  refuseImages(body);
  const chat = agentBodyOf(translated(body));
  const outcome = await runChatTurn(c, {
    body: chat,
    sessionId: c.req.header(SESSION_HEADER) ?? null,
    includeUsage: true,
  });
  const sessionId = outcome.place.sessionId;
  if (outcome.kind === "stream") {
    const headers = eventStreamHeaders();
    headers.set(SESSION_HEADER, sessionId);
    return new Response(messageEvents(outcome.items, body.model), { status: 200, headers });
  }
  const message = chatResponseToMessage(ChatCompletionIn.parse(outcome.completion), body.model);
  if (!message.ok) {
    // Only a tool call's arguments can fail here (not a JSON object): the model's fault. The tool's preflight
    // checks them against the client's schema first, so this is not expected to happen.
    throw new ApiError(
      "agent_model_failed",
      `The agent's model answered a tool call Anthropic's wire cannot carry: ${message.message}`,
      {
        headers: { [SESSION_HEADER]: sessionId },
      },
    );
  }
  return c.json(message.value, 200, { [SESSION_HEADER]: sessionId });
}

/** Both routes in /openapi.json; their bodies are read by the route (errors in Anthropic's shape), not a validator. */
function describe(app: OpenAPIHono<AppBindings>): OpenAPIHono<AppBindings> {
  const tags = ["agent"];
  const security = MESSAGES_SECURITY;
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/agent/v1/messages",
    tags,
    security,
    summary:
      "One turn of the agent in the model's mode, on Anthropic's Messages API (events with stream: true); the session is in X-Aptix-Session",
    request: jsonBody(MessagesRequest, "An Anthropic Messages API request; `model` is `aptix-agent/<mode>`."),
    responses: {
      200: json(
        AnthropicMessage,
        "The agent's answer as a Messages API message (an event stream with `stream: true`); the client's tool calls are `tool_use` blocks.",
      ),
      ...MESSAGES_FAILURES,
      404: anthropicError(
        "The model is not a mode, or X-Aptix-Session names no session of this org (`not_found_error`).",
      ),
      409: anthropicError(
        "A turn runs in the session, or it waits for the client's tool results (`invalid_request_error`).",
      ),
      429: anthropicError("The key's model call budget is spent (`rate_limit_error`)."),
      500: anthropicError("The turn ended without an answer (`api_error`)."),
      502: anthropicError("The mode's model failed (`api_error`)."),
    },
  });
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/agent/v1/messages/count_tokens",
    tags,
    security,
    summary: "An estimate of a Messages request's input tokens (the mode's own prompt and tools not counted)",
    request: jsonBody(CountTokensRequest, "A Messages API request; `max_tokens` may be left out."),
    responses: {
      200: json(z.object({ input_tokens: z.number().int() }), "The estimated input tokens."),
      ...MESSAGES_FAILURES,
    },
  });
  return app;
}

export const agentMessagesRoutes = describe(routes())
  .post("/agent/v1/messages", requireScope("chat"), messages)
  .post("/agent/v1/messages/count_tokens", requireScope("chat"), countTokens);

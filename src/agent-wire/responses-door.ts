// /agent/v1/responses: the agent on OpenAI's Responses API (issue 28), for clients whose default model speaks it
// (the OpenAI Agents SDK, newer coding tools). A request is translated to the chat completions request the agent's
// door answers (src/translate/responses-to-chat.ts) and runs the same turn (chat-turn.ts); the completion or its
// chunks come back as a response object or the Responses stream's events. A response is kept (unless
// `store: false`) with its session and turn: `previous_response_id` continues that session, GET reads it again,
// DELETE hides it.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError, errorBody } from "../errors";
import { type AppContext, BEARER, errors, jsonBody, parseWith, routes } from "../http";
import { eventStreamHeaders } from "../passthrough/headers";
import { quoted } from "../quote";
import { findResponse, hideResponse, insertResponse, newResponseId } from "../session/response-store";
import { headStatement } from "../session/thread-head";
import { holdsScope } from "../tenancy/roles";
import { ResponsesStreamMapper } from "../translate/chat-chunks-to-responses";
import {
  chatCompletionToResponse,
  failedResponse,
  type ResponseMeta,
  responsesToChatRequest,
} from "../translate/responses-to-chat";
import { type ResponseObject, ResponsesRequest, type ResponsesStreamEvent, responsesEventSse } from "../wire/responses";
import { runChatTurn, SESSION_HEADER, type TurnPlace } from "./chat-turn";
import { type DoorStreamItem, doorEventStream } from "./completion";
import { AgentChatBody } from "./transcript";

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["agent"] };

const ResponseId = z.object({ id: z.string().min(1) });

function responseNotFound(id: string, param: string | null = null): ApiError {
  return new ApiError("response_not_found", `No response ${quoted(id)} here (it may have been deleted).`, { param });
}

/**
 * The session a request continues: the one its previous_response_id belongs to (which must be that session's latest
 * response: an answer is never rewritten), or the one X-Aptix-Session names; none for a new conversation.
 */
async function sessionOf(c: AppContext, previousResponseId: string | null): Promise<string | null> {
  const header = c.req.header(SESSION_HEADER) ?? null;
  if (previousResponseId === null) return header;
  // Read where it was written (the primary): a follow-up comes milliseconds after the response it continues.
  const previous = await findResponse(c.env.DB, readerOf(c), previousResponseId);
  if (!previous) throw responseNotFound(previousResponseId, "previous_response_id");
  if (header !== null && header !== previous.sessionId) {
    throw new ApiError(
      "invalid_request",
      `previous_response_id ${quoted(previousResponseId)} belongs to another session than X-Aptix-Session names; send one of them.`,
      { param: "previous_response_id" },
    );
  }
  if (!previous.latest) {
    throw new ApiError(
      "invalid_request",
      `previous_response_id ${quoted(previousResponseId)} is not the latest response of its conversation; continue from the latest one, or send the whole conversation as input without previous_response_id.`,
      { param: "previous_response_id" },
    );
  }
  return previous.sessionId;
}

/** A terminal event of the stream: it carries the whole response, kept before the event goes out. */
function isTerminal(event: ResponsesStreamEvent): event is Extract<ResponsesStreamEvent, { response: ResponseObject }> {
  return (
    event.type === "response.completed" || event.type === "response.incomplete" || event.type === "response.failed"
  );
}

const encoder = new TextEncoder();

/**
 * The door's chunks as the Responses stream: created and in_progress first, the items' events as the turn runs, and
 * the terminal event (completed, incomplete or failed) once the response is kept.
 */
function responseEventStream(
  c: AppContext,
  items: AsyncGenerator<DoorStreamItem>,
  meta: ResponseMeta,
  keep: (response: ResponseObject) => Promise<void>,
): ReadableStream<Uint8Array> {
  const mapper = new ResponsesStreamMapper(meta);
  let terminal: Extract<ResponsesStreamEvent, { response: ResponseObject }> | null = null;
  const bytes = (events: ResponsesStreamEvent[]) =>
    events.flatMap((event) => {
      if (!isTerminal(event)) return [encoder.encode(responsesEventSse(event))];
      terminal ??= event;
      return [];
    });
  let started = false;
  return doorEventStream(items, {
    write: (item) => {
      const first = started ? [] : bytes(mapper.start());
      started = true;
      return [...first, ...bytes(item.kind === "chunk" ? mapper.push(item.chunk) : mapper.fail(item.body))];
    },
    finish: async () => {
      const out = [...bytes(mapper.end())];
      const last = terminal;
      if (!last) return out;
      try {
        await keep(last.response);
        return [...out, encoder.encode(responsesEventSse(last))];
      } catch (error) {
        c.get("logger").addException("[responses_store]", error, [["ResponseId", meta.id]]);
        const failed = failedResponse(
          errorBody("internal_error", "The response could not be kept; send the request again."),
          meta,
          { output: last.response.output, usage: last.response.usage },
        );
        const event = { type: "response.failed" as const, response: failed, sequence_number: last.sequence_number };
        return [...out, encoder.encode(responsesEventSse(event))];
      }
    },
  });
}

export const responsesDoorRoutes = routes()
  .openapi(
    createRoute({
      method: "post",
      path: "/agent/v1/responses",
      summary:
        "One turn of the agent in the model's mode on OpenAI's Responses API (events with stream: true); previous_response_id continues a conversation",
      ...chat,
      request: jsonBody(ResponsesRequest, "An OpenAI Responses API request."),
      responses: {
        200: {
          description:
            "A `response` object, or with `stream: true` the Responses event stream ending in `response.completed`, `response.incomplete` or `response.failed`.",
        },
        ...errors(400, 401, 403, 404, 409, 429, 500, 502),
      },
    }),
    async (c) => {
      const request = c.req.valid("json");
      const translated = responsesToChatRequest(request);
      if (!translated.ok) {
        throw new ApiError("invalid_request", translated.message, { param: translated.param });
      }
      const body = parseWith(AgentChatBody, translated.chat, "request");
      // The previous response is read while the turn's other reads run.
      const sessionId = sessionOf(c, translated.previousResponseId);
      sessionId.catch(() => {});
      const meta: ResponseMeta = {
        id: newResponseId(),
        createdAt: Math.floor(Date.now() / 1000),
        model: request.model,
        echo: translated.echo,
      };
      const outcome = await runChatTurn(c, { body, sessionId, includeUsage: true });
      const { place } = outcome;
      const keep = async (response: ResponseObject) => {
        if (!translated.store) return;
        const kept = placeOf(c, place);
        const row = insertResponse(c.env.DB, kept, response);
        // The head the response names must be its session's for previous_response_id to continue from it: written
        // here with the row when the session's own write of it failed.
        const { keyId } = c.get("principal");
        const head =
          kept.head !== null && !place.headWritten() ? [headStatement(c.env.DB, kept.sessionId, keyId, kept.head)] : [];
        await c.env.DB.batch([...head, row]);
      };
      const headers = { [SESSION_HEADER]: place.sessionId };
      if (outcome.kind === "answer") {
        const response = chatCompletionToResponse(outcome.completion, meta);
        await keep(response);
        return c.json(response, 200, headers);
      }
      const out = eventStreamHeaders();
      out.set(SESSION_HEADER, place.sessionId);
      return new Response(responseEventStream(c, outcome.items, meta, keep), { status: 200, headers: out });
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/agent/v1/responses/{id}",
      summary: "A response the Responses door kept (the org's own; a deleted one is not found)",
      ...chat,
      request: { params: ResponseId },
      responses: { 200: { description: "The `response` object." }, ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const stored = await findResponse(c.env.DB, readerOf(c), id);
      if (!stored) throw responseNotFound(id);
      return c.json(stored.response, 200, { [SESSION_HEADER]: stored.sessionId });
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/agent/v1/responses/{id}",
      summary: "Hides a kept response: GET and previous_response_id no longer find it (the session keeps its turn)",
      ...chat,
      request: { params: ResponseId },
      responses: {
        200: {
          description: "`{id, object: 'response', deleted: true}`.",
          content: {
            "application/json": {
              schema: z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }),
            },
          },
        },
        ...errors(401, 403, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!(await hideResponse(c.env.DB, readerOf(c), id))) throw responseNotFound(id);
      return c.json({ id, object: "response" as const, deleted: true as const }, 200);
    },
  );

/** The caller as a reader of kept responses: its own, or (an admin) any of its org's. */
function readerOf(c: AppContext) {
  const { org, user, scopes } = c.get("principal");
  return { org, user, admin: holdsScope(scopes, "admin") };
}

function placeOf(c: AppContext, place: TurnPlace) {
  return {
    org: c.get("principal").org,
    user: c.get("principal").user,
    sessionId: place.sessionId,
    turnId: place.turnId(),
    head: place.head(),
  };
}

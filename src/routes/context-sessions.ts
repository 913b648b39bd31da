// /context/sessions: create and read agent sessions, run turns, answer approvals and client tool results.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { acceptedTurn, prefersRespondAsync } from "../jobs/respond-async";
import type { AgentMode } from "../modes/agent-mode";
import { D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import { readVersion } from "../modes/mode-versions";
import { quoted } from "../quote";
import type { ModePin } from "../session/mode-pin";
import { callerOf as caller, createSession, hintOf, sessionStub, unwrap } from "../session/session-client";
import { decodeCursor, encodeCursor, listSessions } from "../session/session-index";
import { holdsScope } from "../tenancy/roles";
import {
  ApprovalsBody,
  BranchCreated,
  CreateBranchBody,
  CreateSessionBody,
  ElicitationAnswerBody,
  MAX_MESSAGE_PAGE,
  MESSAGE_PAGE,
  MessageBody,
  MessagePage,
  SessionCreated,
  SessionList,
  SessionSummary,
  SessionView,
  ToolResultsBody,
  WsTicket,
} from "../wire/session";
import { TurnTimeline } from "../wire/timeline";
import { AgentExecuteResponse, TurnAccepted } from "../wire/turn";

/** The pin of a new session to version `version` of `mode` (as the caller's org sees it): org admins only. */
async function modePin(c: AppContext, mode: AgentMode, version: number): Promise<ModePin> {
  if (!holdsScope(c.get("principal").scopes, "admin")) {
    throw new ApiError("insufficient_scope", "Only an org admin pins a session to a mode version.", {
      param: "modeVersion",
    });
  }
  const snapshot = await readVersion(c.get("db"), mode, version);
  if (!snapshot) {
    throw new ApiError("mode_version_not_found", `Mode ${quoted(mode.key)} has no version ${version}.`, {
      param: "modeVersion",
    });
  }
  return { mode: mode.key, version, snapshot };
}

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["sessions"] };
const SessionId = z.object({ sessionId: z.string() });
const TurnId = SessionId.extend({ turnId: z.string().min(1).max(200) });
const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("Sessions a page (1 to 100, 20 by default)."),
  cursor: z.string().min(1).optional().describe("The nextCursor of the previous page."),
  archived: z
    .enum(["true", "false"], { error: "must be 'true' or 'false'" })
    .default("false")
    .describe("true: only archived sessions; false (the default): only the others."),
  q: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(200)
    .optional()
    .describe("Only sessions whose title contains this text (case-insensitive)."),
  branchOf: z
    .string()
    .min(1, "must not be empty")
    .max(200)
    .optional()
    .describe("Only the branches a person started from this session (POST .../branches)."),
});
const MessagesQuery = z.object({
  before: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Only messages with a smaller seq (the oldest seq seen so far); the newest without it."),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_MESSAGE_PAGE)
    .default(MESSAGE_PAGE)
    .describe(`Messages a page (1 to ${MAX_MESSAGE_PAGE}, ${MESSAGE_PAGE} by default).`),
});
const turn = (description: string) => json(AgentExecuteResponse, description);
/** With `Prefer: respond-async`: the turn's ids, `Location` its status, `Preference-Applied: respond-async`. */
const accepted = {
  202: json(
    TurnAccepted,
    "With `Prefer: respond-async`: the turn was admitted and stored and runs on; poll `Location` for its status.",
  ),
};

/** A turn that failed because the model service rate limited us says how long it asked us to wait, as HTTP does. */
function turnHeaders(response: AgentExecuteResponse): Record<string, string> {
  const wait = response.error?.retryAfterSeconds;
  return wait === undefined ? {} : { "retry-after": String(wait) };
}

/** A turn's answer: 200 whatever its outcome (a failed turn says why in `error`), Retry-After when it has one. */
const turnAnswer = (response: AgentExecuteResponse) => [response, 200, turnHeaders(response)] as const;

export const contextSessionRoutes = routes()
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions",
      summary: "A new agent session, owned by the key's org",
      ...chat,
      request: jsonBody(CreateSessionBody, "The mode (the catalog's default without one), and a version to pin it to."),
      responses: { 201: json(SessionCreated, "The session."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const catalog = new D1AgentModeCatalogService(c.get("db"), c.get("principal").org);
      const mode = body.mode ? await catalog.getMode(body.mode) : await catalog.getDefaultMode();
      if (!mode) {
        throw new ApiError("unknown_mode", await unknownModeMessage(catalog, body.mode ?? ""), { param: "mode" });
      }
      const pin = body.modeVersion === undefined ? undefined : await modePin(c, mode, body.modeVersion);
      const session = await createSession(c.env, c.get("principal"), mode.key, hintOf(c), undefined, undefined, pin);
      const { sessionId, status, createdAt, modeVersion } = session;
      return c.json({ sessionId, mode: session.mode, modeVersion, status, createdAt }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/branches",
      summary: "A new session branched from this one before one of the user's own messages",
      description:
        "The branch is the caller's, in the source's mode (or `mode`), and starts with the source's conversation " +
        "before the message `beforeMessage` (its seq): send the edited (or the same) message in it for a new answer. " +
        "The source is not changed. Its list entry and view carry `branchOf`; `GET /context/sessions?branchOf=<id>` " +
        "lists the branches of a session.",
      ...chat,
      request: { params: SessionId, ...jsonBody(CreateBranchBody, "Where the branch starts; its mode.") },
      responses: { 201: json(BranchCreated, "The branch."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { beforeMessage, mode: asked } = c.req.valid("json");
      // An unknown mode is refused before the conversation is copied out of the source.
      const catalog = new D1AgentModeCatalogService(c.get("db"), c.get("principal").org);
      if (asked && !(await catalog.getMode(asked))) {
        throw new ApiError("unknown_mode", await unknownModeMessage(catalog, asked), { param: "mode" });
      }
      const source = sessionStub(c.env, c.req.valid("param").sessionId);
      const seed = unwrap(await source.branchSeed(caller(c), beforeMessage));
      const branch = { origin: seed.origin, messages: seed.messages };
      const session = await createSession(c.env, c.get("principal"), asked ?? seed.mode, hintOf(c), branch);
      const { sessionId, mode, status, createdAt, branchOf } = session;
      if (!branchOf) throw new Error(`The branch ${sessionId} does not know where it came from.`);
      return c.json({ sessionId, mode, status, createdAt, branchOf }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions",
      summary: "The caller's own sessions, newest change first, a page at a time",
      description:
        "Each with its mode, status, whether it waits for the user, its title and when it last changed. Archived " +
        "sessions only with `archived=true`; `q` searches titles. The list is written by each session just after " +
        "it changes, so it may lag a turn by a moment.",
      ...chat,
      request: { query: ListQuery },
      responses: { 200: json(SessionList, "A page of sessions."), ...errors(400, 401, 403) },
    }),
    async (c) => {
      const { limit, cursor, archived, q, branchOf } = c.req.valid("query");
      const after = cursor === undefined ? null : decodeCursor(cursor);
      if (cursor !== undefined && !after) {
        throw new ApiError("invalid_request", "cursor is not a cursor from this list: pass nextCursor as it came.", {
          param: "cursor",
        });
      }
      const { org, user } = c.get("principal");
      const filter = { archived: archived === "true", query: q ?? null, branchOf: branchOf ?? null };
      const page = await listSessions(c.get("db"), { org, user }, { limit, after }, filter);
      const last = page.sessions.at(-1);
      return c.json({ sessions: page.sessions, nextCursor: page.more && last ? encodeCursor(last) : null }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}",
      summary: "Mode, status, mode history, pending tool calls, the newest messages and turns, summary, artifacts",
      ...chat,
      request: { params: SessionId },
      responses: { 200: json(SessionView, "The session."), ...errors(401, 403, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sessionId).getSession(caller(c))), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}/summary",
      summary: "The whole summary of the earlier conversation (the session's view carries a preview)",
      description:
        "The summary the model is sent in place of the messages it covers (fromSeq..toSeq), whole; null before the " +
        "first compaction. The session's owner or an admin of its org may read it; anyone else gets 404.",
      ...chat,
      request: { params: SessionId },
      responses: { 200: json(SessionSummary, "The summary."), ...errors(401, 403, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sessionId).getSummary(caller(c))), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}/messages",
      summary: "A page of the session's messages, newest first",
      description:
        "The session's view carries its newest messages; older ones come a page at a time: pass the oldest seq " +
        "seen as `before` while `hasMore` is true. Messages here are whole: one the view cut (`truncated`) is read " +
        "with `before=<its seq + 1>&limit=1`.",
      ...chat,
      request: { params: SessionId, query: MessagesQuery },
      responses: { 200: json(MessagePage, "A page of messages."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { before, limit } = c.req.valid("query");
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      return c.json(unwrap(await stub.getMessages(caller(c), { before: before ?? null, limit })), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}/turns/{turnId}/timeline",
      summary: "A turn's steps on its time axis: model calls, tool calls, waits, failovers and restarts",
      description:
        "The session's own record of the turn (kept with no trace collector configured): each step with its offset " +
        "from the turn's start and its duration, and the trace ids of its spans when tracing was on. A turn that " +
        "ran before the timeline was kept answers with no steps.",
      ...chat,
      request: { params: TurnId },
      responses: { 200: json(TurnTimeline, "The turn's timeline."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { sessionId, turnId } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sessionId).turnTimeline(caller(c), turnId)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/messages",
      summary: "Runs one turn; with Accept: text/event-stream, streams its frames as server-sent events",
      description:
        "With `Prefer: respond-async` the answer is 202 as soon as the turn is admitted and stored, and the turn " +
        "runs on (poll `Location`; the WebSocket and SSE see it live). " +
        "The message may carry attachments: text files (`{name, mediaType, text}`) and images " +
        "(`{name, mediaType, data}`, base64) for a mode whose model route reads images (`inputModalities`); " +
        "an image on any other mode is refused, 400 `attachment_not_accepted` naming it.",
      ...chat,
      request: { params: SessionId, ...jsonBody(MessageBody, "The user's message.") },
      responses: {
        200: {
          content: {
            "application/json": { schema: AgentExecuteResponse },
            "text/event-stream": { schema: z.string().meta({ description: "The turn's frames (docs/protocol.md)." }) },
          },
          description: "The turn: completed, failed, cancelled, or paused for approvals or client results.",
        },
        ...accepted,
        ...errors(400, 401, 403, 404, 409, 413, 429),
      },
    }),
    async (c) => {
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      const { content, attachments = [] } = c.req.valid("json");
      if (prefersRespondAsync(c.req.header("prefer"))) {
        return acceptedTurn(c, unwrap(await stub.startTurn(caller(c), { kind: "message", content, attachments })));
      }
      if (c.req.header("accept")?.includes("text/event-stream")) {
        const stream = unwrap(await stub.sendMessageStream(caller(c), content, attachments));
        return new Response(stream, {
          headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "content-encoding": "identity" },
        });
      }
      return c.json(...turnAnswer(unwrap(await stub.sendMessage(caller(c), content, attachments))));
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/ws-ticket",
      summary: "A single-use, 60-second ticket for the session's WebSocket",
      ...chat,
      request: { params: SessionId },
      responses: { 201: json(WsTicket, "The ticket."), ...errors(401, 403, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sessionId).issueTicket(caller(c))), 201),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/approvals",
      summary: "Decisions on calls that wait for approval; the turn resumes when the batch is decided",
      ...chat,
      request: { params: SessionId, ...jsonBody(ApprovalsBody, "The decisions.") },
      responses: { 200: turn("The resumed turn."), ...accepted, ...errors(400, 401, 403, 404, 409, 429) },
    }),
    async (c) => {
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      const { decisions } = c.req.valid("json");
      if (prefersRespondAsync(c.req.header("prefer"))) {
        return acceptedTurn(c, unwrap(await stub.startTurn(caller(c), { kind: "approvals", decisions })));
      }
      return c.json(...turnAnswer(unwrap(await stub.submitApprovals(caller(c), decisions))));
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/tool-results",
      summary:
        "Results of client-executed calls (up to MAX_TOOL_RESULT_BYTES); the turn resumes when the batch settles",
      ...chat,
      request: { params: SessionId, ...jsonBody(ToolResultsBody, "The results.") },
      responses: { 200: turn("The resumed turn."), ...accepted, ...errors(400, 401, 403, 404, 409, 413, 429) },
    }),
    async (c) => {
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      const { results } = c.req.valid("json");
      if (prefersRespondAsync(c.req.header("prefer"))) {
        return acceptedTurn(c, unwrap(await stub.startTurn(caller(c), { kind: "tool_results", results })));
      }
      return c.json(...turnAnswer(unwrap(await stub.submitToolResults(caller(c), results))));
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/context/sessions/{sessionId}/elicitations/{elicitationId}",
      summary:
        "The user's answer (accept with content, decline, cancel) to a question a tool's MCP server asks mid-call; answers when the turn next stops",
      ...chat,
      request: {
        params: SessionId.extend({ elicitationId: z.string().min(1) }),
        ...jsonBody(ElicitationAnswerBody, "The answer."),
      },
      responses: { 200: turn("The turn, once it stops again."), ...errors(400, 401, 403, 404, 409, 429) },
    }),
    async (c) => {
      const { sessionId, elicitationId } = c.req.valid("param");
      const answer = c.req.valid("json");
      return c.json(
        unwrap(await sessionStub(c.env, sessionId).answerElicitation(caller(c), elicitationId, answer)),
        200,
      );
    },
  );

// A session's turns: one turn's status (a background turn's caller polls it), and a page of them, newest first.
// The session's owner or an admin of its org; anyone else gets 404, as on every session route.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { BEARER, errors, json, routes } from "../http";
import { callerOf as caller, sessionStub, unwrap } from "../session/session-client";
import { TurnPage, TurnStatus, TurnStatusValue } from "../wire/turn";

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["sessions"] };
const SessionId = z.object({ sessionId: z.string() });
const TurnId = SessionId.extend({ turnId: z.string().min(1).max(200) });
const TurnsQuery = z.object({
  status: TurnStatusValue.optional().describe("Only turns in this state."),
  before: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Only turns older than this one (the last turnId of the previous page); the newest without it."),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe("Turns a page (1 to 100, 20 by default)."),
});

export const sessionTurnRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}/turns/{turnId}",
      summary: "A turn's status: running, paused (with what it awaits), completed (its answer), failed (its error)",
      description:
        "The `Location` of a turn started with `Prefer: respond-async`; any turn of the session may be read. " +
        "`pending` lists the calls awaiting approval and the client's results while paused.",
      ...chat,
      request: { params: TurnId },
      responses: { 200: json(TurnStatus, "The turn."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { sessionId, turnId } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sessionId).turnStatus(caller(c), turnId)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}/turns",
      summary: "The session's turns, newest first, a page at a time",
      description:
        "The open turn (running or paused) first, then the ended ones. While `hasMore` is true, ask again with " +
        "`before` set to the last turnId of the page (and the same `status`).",
      ...chat,
      request: { params: SessionId, query: TurnsQuery },
      responses: { 200: json(TurnPage, "A page of turns."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { status, before, limit } = c.req.valid("query");
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      const options = { limit, before: before ?? null, ...(status ? { status } : {}) };
      return c.json(unwrap(await stub.listTurns(caller(c), options)), 200);
    },
  );

// GET /context/sessions/:sessionId/ws?ticket=...: the session's WebSocket. Browsers cannot send headers on a
// WebSocket, so this route takes a single-use ticket (from POST .../ws-ticket) instead of the API key.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { errors, routes } from "../http";
import { sessionStubOrNull } from "../session/session-client";
import { invalidTicketResponse, upgradeRequiredResponse } from "../session/tickets";

export const sessionSocketRoutes = routes().openapi(
  createRoute({
    method: "get",
    path: "/context/sessions/{sessionId}/ws",
    tags: ["sessions"],
    security: [],
    summary: "The session's WebSocket (docs/protocol.md), opened with a ticket instead of the key",
    request: {
      params: z.object({ sessionId: z.string() }),
      query: z.object({
        ticket: z.string().optional().meta({ description: "The single-use ticket from POST .../ws-ticket." }),
        afterSeq: z.string().optional().meta({ description: "Replay the logged frames after this seq." }),
      }),
    },
    responses: {
      101: { description: "Switching to the WebSocket protocol." },
      ...errors(401),
      426: { description: "Not a WebSocket upgrade request." },
    },
  }),
  async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return upgradeRequiredResponse();
    // An id that cannot be a session answers like any unknown session: exactly as a bad ticket does.
    const stub = sessionStubOrNull(c.env, c.req.valid("param").sessionId);
    if (!stub) return invalidTicketResponse();
    const { ticket, afterSeq } = c.req.valid("query");
    const forwarded = new URL("https://session.internal/ws");
    if (ticket !== undefined) forwarded.searchParams.set("ticket", ticket);
    if (afterSeq !== undefined) forwarded.searchParams.set("afterSeq", afterSeq);
    return stub.fetch(new Request(forwarded, { headers: c.req.raw.headers }));
  },
);

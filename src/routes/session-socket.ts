// GET /context/sessions/:sessionId/ws?ticket=...: the session's WebSocket. Browsers cannot send headers on a
// WebSocket, so this route takes a single-use ticket (from POST .../ws-ticket) instead of the API key.
import { Hono } from "hono";
import type { AppBindings } from "../http";
import { sessionStubOrNull } from "../session/session-client";
import { invalidTicketResponse, upgradeRequiredResponse } from "../session/tickets";

export const sessionSocketRoutes = new Hono<AppBindings>().get("/context/sessions/:sessionId/ws", async (c) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return upgradeRequiredResponse();
  // An id that cannot be a session answers like any unknown session: exactly as a bad ticket does.
  const stub = sessionStubOrNull(c.env, c.req.param("sessionId"));
  if (!stub) return invalidTicketResponse();
  const url = new URL(c.req.url);
  const forwarded = new URL("https://session.internal/ws");
  for (const name of ["ticket", "afterSeq"]) {
    const value = url.searchParams.get(name);
    if (value !== null) forwarded.searchParams.set(name, value);
  }
  return stub.fetch(new Request(forwarded, { headers: c.req.raw.headers }));
});

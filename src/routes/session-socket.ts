// GET /context/sessions/:sessionId/ws?ticket=...: the session's WebSocket. Browsers cannot send headers on a
// WebSocket, so this route takes a single-use ticket (from POST .../ws-ticket) instead of the API key.
import { Hono } from "hono";
import type { AppBindings } from "../http";
import { sessionStub } from "../session/session-client";

export const sessionSocketRoutes = new Hono<AppBindings>().get("/context/sessions/:sessionId/ws", async (c) => {
  const stub = sessionStub(c.env, c.req.param("sessionId"));
  const url = new URL(c.req.url);
  const forwarded = new URL("https://session.internal/ws");
  for (const name of ["ticket", "afterSeq"]) {
    const value = url.searchParams.get(name);
    if (value !== null) forwarded.searchParams.set(name, value);
  }
  return stub.fetch(new Request(forwarded, { headers: c.req.raw.headers }));
});

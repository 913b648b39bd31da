// /context/sessions: create and read agent sessions, run turns, answer approvals and client tool results.
import { Hono } from "hono";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppBindings, readJsonBody } from "../http";
import { D1AgentModeCatalogService, unknownModeMessage } from "../modes/catalog-service";
import { callerOf as caller, sessionStub, unwrap } from "../session/session-client";

const CreateSessionBody = z.strictObject({ mode: z.string().min(1).optional() });
const MessageBody = z.strictObject({ content: z.string().trim().min(1, "must not be empty").max(100_000) });
const ApprovalsBody = z.strictObject({
  decisions: z
    .array(
      z.strictObject({
        toolCallId: z.string().min(1),
        approved: z.boolean(),
        reason: z.string().max(2_000).optional(),
      }),
    )
    .min(1, "needs at least one decision"),
});
const ToolResultsBody = z.strictObject({
  results: z
    .array(
      z
        .strictObject({
          toolCallId: z.string().min(1),
          resultJson: z.string().max(10_485_760).optional(),
          errorMessage: z.string().min(1).max(10_000).optional(),
        })
        .refine((r) => (r.resultJson === undefined) !== (r.errorMessage === undefined), {
          error: "needs exactly one of resultJson and errorMessage",
        }),
    )
    .min(1, "needs at least one result"),
});

export const contextSessionRoutes = new Hono<AppBindings>()
  .use("/context/*", requireScope("chat"))
  .post("/context/sessions", async (c) => {
    const body = await readJsonBody(c, CreateSessionBody);
    const catalog = new D1AgentModeCatalogService(c.env.DB);
    const mode = body.mode ? await catalog.getMode(body.mode) : await catalog.getDefaultMode();
    if (!mode) throw ApiError.badRequest(await unknownModeMessage(catalog, body.mode ?? ""), "mode", "unknown_mode");
    const id = c.env.AGENT_SESSION.newUniqueId();
    const session = await c.env.AGENT_SESSION.get(id).initialize({
      sessionId: id.toString(),
      org: c.var.principal.org,
      user: c.var.principal.user,
      mode: mode.key,
      parentSessionId: null,
    });
    return c.json(
      { sessionId: session.sessionId, mode: session.mode, status: session.status, createdAt: session.createdAt },
      201,
    );
  })
  .get("/context/sessions/:sessionId", async (c) => {
    return c.json(unwrap(await sessionStub(c.env, c.req.param("sessionId")).getSession(caller(c))));
  })
  .post("/context/sessions/:sessionId/messages", async (c) => {
    const stub = sessionStub(c.env, c.req.param("sessionId"));
    const body = await readJsonBody(c, MessageBody);
    if (c.req.header("accept")?.includes("text/event-stream")) {
      const stream = unwrap(await stub.sendMessageStream(caller(c), body.content));
      return new Response(stream, {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "content-encoding": "identity" },
      });
    }
    return c.json(unwrap(await stub.sendMessage(caller(c), body.content)));
  })
  .post("/context/sessions/:sessionId/ws-ticket", async (c) => {
    const stub = sessionStub(c.env, c.req.param("sessionId"));
    return c.json(unwrap(await stub.issueTicket(caller(c))), 201);
  })
  .post("/context/sessions/:sessionId/approvals", async (c) => {
    const stub = sessionStub(c.env, c.req.param("sessionId"));
    const body = await readJsonBody(c, ApprovalsBody);
    return c.json(unwrap(await stub.submitApprovals(caller(c), body.decisions)));
  })
  .post("/context/sessions/:sessionId/tool-results", async (c) => {
    const stub = sessionStub(c.env, c.req.param("sessionId"));
    const body = await readJsonBody(c, ToolResultsBody);
    return c.json(unwrap(await stub.submitToolResults(caller(c), body.results)));
  });

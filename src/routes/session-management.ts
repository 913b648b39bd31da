// /context/sessions/:id managed by a person: rename and archive (PATCH), delete for good (DELETE), and export the
// whole conversation as JSON a system can import or Markdown a person can read (GET .../export).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { callerOf as caller, sessionStub, unwrap } from "../session/session-client";
import { EXPORT_FORMATS } from "../session/session-export";
import { PatchSessionBody, SessionExport, SessionListEntry } from "../wire/session";

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["sessions"] };
const SessionId = z.object({ sessionId: z.string() });
const SessionDeleted = z.object({ sessionId: z.string(), deleted: z.literal(true) });
const ExportQuery = z.object({
  format: z
    .enum(EXPORT_FORMATS, { error: "must be 'json' or 'markdown'" })
    .default("json")
    .describe("json (the `aptix.session.v1` shape, docs/api.md) or markdown; json by default."),
});

export const sessionManagementRoutes = routes()
  .openapi(
    createRoute({
      method: "patch",
      path: "/context/sessions/{sessionId}",
      summary: "Renames or archives a session (its owner, or an admin of its org)",
      description:
        "A title a person gives is never replaced by the automatic one; `title: null` gives the automatic title " +
        "(from the first message) back. An archived session is left out of the list unless `archived=true`.",
      ...chat,
      request: { params: SessionId, ...jsonBody(PatchSessionBody, "The new title, archived, or both.") },
      responses: {
        200: json(SessionListEntry, "The session as the list now shows it."),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      const { title, archived } = c.req.valid("json");
      const change = {
        ...(title !== undefined ? { title: title === null ? null : title.replace(/\s+/g, " ") } : {}),
        ...(archived !== undefined ? { archived } : {}),
      };
      return c.json(unwrap(await stub.changeSession(caller(c), change)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/context/sessions/{sessionId}",
      summary: "Deletes a session for good (its owner, or an admin of its org)",
      description:
        "Its conversation, tool calls, turns and event log are deleted, it leaves the list and its sockets are " +
        "closed; from then on its id answers 404 everywhere. Usage rows stay (they hold no text).",
      ...chat,
      request: { params: SessionId },
      responses: { 200: json(SessionDeleted, "The session is deleted."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      return c.json(unwrap(await stub.deleteSession(caller(c))), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/context/sessions/{sessionId}/export",
      summary: "The whole session as a file: JSON a system can import, or Markdown a person can read",
      ...chat,
      request: { params: SessionId, query: ExportQuery },
      responses: {
        200: {
          content: {
            "application/json": { schema: SessionExport },
            "text/markdown": { schema: z.string().meta({ description: "The conversation, tool calls included." }) },
          },
          description: "The export, as an attachment (Content-Disposition names its file).",
        },
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const stub = sessionStub(c.env, c.req.valid("param").sessionId);
      const file = unwrap(await stub.exportSession(caller(c), c.req.valid("query").format));
      return new Response(file.body, {
        headers: {
          "content-type": file.contentType,
          "content-disposition": `attachment; filename="${file.filename}"`,
          "cache-control": "no-store",
        },
      });
    },
  );

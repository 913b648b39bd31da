// /agent/v1: the agent on the OpenAI wire (scope `chat`). Each mode is a model; a chat completion runs one
// turn of the agent in a session (the X-Aptix-Session header names it, or the history the client resends
// finds it), with the client's own tools as client-executed tools; approvals are asked and answered in words.
// The passthrough at /v1 is untouched.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { eventStreamHeaders } from "../passthrough/headers";
import { modelNotFound, runChatTurn, SESSION_HEADER } from "./chat-turn";
import { chatEventStream } from "./completion";
import { modeKeyOfModel, modelOfMode } from "./models";
import { AgentChatBody } from "./transcript";

const Model = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.string(),
  name: z.string(),
  description: z.string(),
});

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["agent"] };

export const agentWireRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/agent/v1/models",
      summary: "The agent's models: one per mode (aptix-agent/<mode key>)",
      ...chat,
      responses: {
        200: json(z.object({ object: z.literal("list"), data: z.array(Model) }), "The models."),
        ...errors(401, 403),
      },
    }),
    async (c) => {
      const modes = await new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getAllModes();
      return c.json({ object: "list" as const, data: modes.map(modelOfMode) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/agent/v1/models/{model}",
      summary: "One of the agent's models (the id's '/' may be sent as %2F)",
      ...chat,
      request: { params: z.object({ model: z.string().min(1) }) },
      responses: { 200: json(Model, "The model."), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { model } = c.req.valid("param");
      const key = modeKeyOfModel(model);
      const mode = key ? await new D1AgentModeCatalogService(c.get("db"), c.get("principal").org).getMode(key) : null;
      if (!mode) return modelNotFound(c, model);
      return c.json(modelOfMode(mode), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/agent/v1/chat/completions",
      summary:
        "One turn of the agent in the model's mode, as a chat completion (or chunks with stream: true); the session is in X-Aptix-Session",
      ...chat,
      request: jsonBody(AgentChatBody, "An OpenAI chat completions request."),
      responses: {
        200: {
          description:
            "A `chat.completion`, or with `stream: true` an event stream of `chat.completion.chunk` ending in `[DONE]`.",
        },
        ...errors(400, 401, 403, 404, 409, 429, 500, 502),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const outcome = await runChatTurn(c, {
        body,
        sessionId: c.req.header(SESSION_HEADER) ?? null,
        includeUsage: body.stream_options?.include_usage === true,
      });
      const headers = { [SESSION_HEADER]: outcome.place.sessionId };
      if (outcome.kind === "answer") return c.json(outcome.completion, 200, headers);
      const out = eventStreamHeaders();
      out.set(SESSION_HEADER, outcome.place.sessionId);
      return new Response(chatEventStream(outcome.items), { status: 200, headers: out });
    },
  );

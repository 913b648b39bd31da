// /agent/v1: the agent on the OpenAI wire (scope `chat`). Each mode is a model; a chat completion runs one
// turn of the agent in a session (the X-Aptix-Session header names it, or the history the client resends
// finds it), with the client's own tools as client-executed tools; approvals are asked and answered in words.
// The passthrough at /v1 is untouched.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { BOOKMARK_HEADER } from "../db";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, jsonBody, routes } from "../http";
import { takeModelCall } from "../metering/model-call-limit";
import { D1AgentModeCatalogService } from "../modes/catalog-service";
import { eventStreamHeaders } from "../passthrough/headers";
import { quoted } from "../quote";
import { refuse } from "../refusal";
import type { DoorTurn } from "../session/agent-door";
import { callerOf, hintOf, placement, sessionStub, unwrap } from "../session/session-client";
import { cachedTurnReads, readTurnReads } from "../session/session-model";
import { settings } from "../settings";
import { clientFunctionTool, clientToolRegistry } from "../tools/client-function-tool";
import { AgentToolContractError } from "../tools/registry";
import type { OpenAIToolCall } from "../wire/openai";
import { answerText, chunkStream, clientToolCalls, completionJson, completionMeta, turnFailure } from "./completion";
import { modeKeyOfModel, modelOfMode } from "./models";
import { recordHead, resolveThread } from "./threads";
import {
  AgentChatBody,
  canonicalArguments,
  declaredTools,
  fingerprintChain,
  meaningOf,
  nextFingerprint,
  trailingInput,
} from "./transcript";

/** The header that names the session a request continues, and that every answer carries. */
export const SESSION_HEADER = "X-Aptix-Session";

const Model = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.string(),
  name: z.string(),
  description: z.string(),
});

const chat = { security: BEARER, middleware: [requireScope("chat")], tags: ["agent"] };

async function modelNotFound(c: AppContext, model: string): Promise<never> {
  const modes = await new D1AgentModeCatalogService(c.var.db).getAllModes();
  const known = modes.map((m) => modelOfMode(m).id).join(", ");
  throw new ApiError("model_not_found", `Model ${quoted(model)} not found; the agent's models are: ${known}.`, {
    param: "model",
  });
}

/**
 * The mode and base prompt of a turn: this isolate's copy (MODES_CACHE_MS), unless the client sent a D1
 * bookmark, which asks to read at least what its last answer had seen (its own writes included).
 */
function turnReadsOf(c: AppContext, key: string) {
  if (c.req.header(BOOKMARK_HEADER)) return readTurnReads(c.var.db, key);
  return cachedTurnReads(c.env.DB, c.var.db, key, settings(c.env).modes.cacheMs);
}

/**
 * The client's tools, each checked against the tool contract and against the built-in tools' names (400 naming
 * the first bad one), in a registry that makes none of the built-in tools.
 */
function checkClientTools(c: AppContext, body: AgentChatBody) {
  const declared = declaredTools(body);
  if (declared.length === 0) return declared;
  const registry = clientToolRegistry(c.var.logger);
  declared.forEach((tool, index) => {
    try {
      registry.registerTool(clientFunctionTool(tool));
    } catch (error) {
      if (!(error instanceof AgentToolContractError)) throw error;
      throw new ApiError("invalid_request", `Invalid 'tools.${index}': ${error.message}`, { param: `tools.${index}` });
    }
  });
  return declared;
}

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
      const modes = await new D1AgentModeCatalogService(c.var.db).getAllModes();
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
      const mode = key ? await new D1AgentModeCatalogService(c.var.db).getMode(key) : null;
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
      const { keyId, org, user } = c.var.principal;
      const key = modeKeyOfModel(body.model);
      const clientTools = checkClientTools(c, body);
      const meanings = body.messages.map(meaningOf);
      const input = trailingInput(meanings);
      if ("problem" in input) {
        throw new ApiError("invalid_request", `Invalid '${input.param}': ${input.problem}.`, { param: input.param });
      }
      // At once: the mode and base prompt (one round trip to D1), the key's model call budget for the turn's
      // first call, and the session the history belongs to. The first model call then starts without a read.
      const chain = fingerprintChain(meanings);
      const [reads, grant, thread] = await Promise.all([
        key ? turnReadsOf(c, key) : null,
        takeModelCall(c.env.MODEL_CALL_LIMITER, keyId, c.var.logger),
        chain.then((fingerprints) =>
          // A conversation's head is read where it was written (the primary): a follow-up comes milliseconds
          // after it, and a client of the OpenAI wire carries no bookmark.
          resolveThread(c.env.DB, keyId, c.req.header(SESSION_HEADER) ?? null, meanings, fingerprints, input),
        ),
      ]);
      const mode = reads?.mode;
      if (!reads || !mode) return modelNotFound(c, body.model);
      if (thread.kind === "refused") {
        throw new ApiError("invalid_request", thread.message, { param: thread.param });
      }
      if (!grant.ok) {
        throw ApiError.from(
          refuse("rate_limit_exceeded", grant.message, { retryAfterSeconds: grant.retryAfterSeconds }),
        );
      }
      // A new session is created by the turn's own call to its object.
      const sessionId = thread.kind === "continue" ? thread.sessionId : c.env.AGENT_SESSION.newUniqueId().toString();
      const stub =
        thread.kind === "continue"
          ? sessionStub(c.env, sessionId)
          : c.env.AGENT_SESSION.get(c.env.AGENT_SESSION.idFromString(sessionId), placement(hintOf(c)));
      const turn: DoorTurn = {
        input:
          input.type === "message"
            ? { type: "message", content: input.content }
            : { type: "tool_results", results: input.results },
        seed: thread.kind === "new" ? thread.seed : [],
        clientTools,
        reads: { mode, basePrompt: reads.basePrompt },
        prepaid: true,
        ...(thread.kind === "new" ? { create: { org, user, mode: mode.key } } : {}),
      };
      const names = new Set(clientTools.map((t) => t.function.name));
      const meta = completionMeta(body.model);
      const headers = { [SESSION_HEADER]: sessionId };
      // The session's head: the history with this answer appended, as the client will send it back.
      const remember = async (content: string, calls: OpenAIToolCall[]) => {
        const reply = {
          role: "assistant" as const,
          text: content,
          calls: calls.map((t) => ({
            id: t.id,
            name: t.function.name,
            arguments: canonicalArguments(t.function.arguments),
          })),
        };
        await recordHead(c.env.DB, sessionId, keyId, await nextFingerprint((await chain).at(-1) ?? "", reply));
      };

      if (body.stream) {
        const frames = unwrap(await stub.doorTurnStream(callerOf(c), turn));
        const stream = chunkStream(frames, meta, {
          clientTools: names,
          includeUsage: body.stream_options?.include_usage === true,
          onEnd: (answer) => remember(answer.content, answer.toolCalls),
          onBreak: (error) => c.var.logger.addException("AgentWire_Stream", error, [["sessionId", sessionId]]),
        });
        const out = eventStreamHeaders();
        out.set(SESSION_HEADER, sessionId);
        return new Response(stream, { status: 200, headers: out });
      }

      const answer = unwrap(await stub.doorTurn(callerOf(c), turn));
      const failure = turnFailure(answer.response);
      if (failure) throw new ApiError(failure.code, failure.message, { headers });
      const waiting = new Set(answer.waitingForClient);
      const calls = clientToolCalls(
        answer.response.toolCalls.filter((t) => waiting.has(t.id)),
        names,
      );
      const content = answerText(answer.response, answer.content);
      await remember(content, calls);
      return c.json(completionJson(meta, content, calls, answer.usage), 200, headers);
    },
  );

// createApp(): middleware, the one error path, the routes, and the OpenAPI document they are declared in;
// the Worker and the tests serve the same app.
import { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import { a2aCardRoutes } from "./a2a/card-route";
import { a2aJsonRpcRoutes } from "./a2a/jsonrpc-route";
import { a2aRestRoutes } from "./a2a/rest-routes";
import { describeA2A } from "./a2a/routes-described";
import { agentMcpRoutes } from "./agent-mcp/routes";
import { agentMessagesRoutes } from "./agent-wire/messages-door";
import { responsesDoorRoutes } from "./agent-wire/responses-door";
import { agentWireRoutes } from "./agent-wire/routes";
import { corsForListedOrigins } from "./auth/cors";
import { requireApiKey } from "./auth/middleware";
import { originGuard } from "./auth/origin-guard";
import { ApiError, errorBody } from "./errors";
import { type AppBindings, d1Session, errors, notJsonBody } from "./http";
import { httpSpan } from "./http-span";
import { idempotency } from "./jobs/idempotency";
import { ModeCatalogError } from "./modes/catalog-service";
import { JsonAdminLogger } from "./observability/admin-logger";
import { pageHeaders } from "./page-headers";
import { anthropicErrorShape } from "./passthrough/anthropic-errors";
import { messagesRoutes } from "./passthrough/messages";
import { passthroughRoutes } from "./passthrough/routes";
import { quoted } from "./quote";
import { adminAuditRoutes } from "./routes/admin-audit";
import { adminBenchOpsRoutes } from "./routes/admin-bench-ops";
import { adminEvalRoutes } from "./routes/admin-evals";
import { adminGuardrailRoutes } from "./routes/admin-guardrails";
import { adminHealthRoutes } from "./routes/admin-health";
import { adminKeyRoutes } from "./routes/admin-keys";
import { adminMcpServerRoutes } from "./routes/admin-mcp-servers";
import { adminMemoryRoutes } from "./routes/admin-memory";
import { adminModeVersionRoutes } from "./routes/admin-mode-versions";
import { adminModelRouteRoutes } from "./routes/admin-model-routes";
import { adminModeRoutes } from "./routes/admin-modes";
import { adminSecretRoutes } from "./routes/admin-secrets";
import { adminUsageCallRoutes } from "./routes/admin-usage-calls";
import { adminUserRoutes } from "./routes/admin-users";
import { keySignInRoutes, sessionAuthRoutes, signInRoutes } from "./routes/auth";
import { authorizeRoutes } from "./routes/authorize";
import { contextSearchRoutes } from "./routes/context-search";
import { contextSessionRoutes } from "./routes/context-sessions";
import { grantRoutes } from "./routes/grants";
import { healthRoutes } from "./routes/health";
import { memoryRoutes } from "./routes/memories";
import { modeRoutes } from "./routes/modes";
import { personExportRoutes } from "./routes/person-export";
import { scheduleRoutes } from "./routes/schedules";
import { sessionManagementRoutes } from "./routes/session-management";
import { sessionSocketRoutes } from "./routes/session-socket";
import { sessionTurnRoutes } from "./routes/session-turns";
import { systemPromptRoutes } from "./routes/system-prompts";
import { webhookRoutes } from "./routes/webhooks";
import { workflowRoutes } from "./routes/workflows";
import { SettingsError, settings } from "./settings";

/** The routes that carry tool results (whole files): /context's, the agent's three doors and its MCP server. */
const TOOL_RESULTS_PATH =
  /^(\/context\/sessions\/[^/]+\/tool-results|\/agent\/v1\/(chat\/completions|responses|messages)|\/mcp)$/;

/** The largest body `path` takes: tool results carry whole files, so their routes take more. */
export function maxBodyBytes(env: object, path = ""): number {
  const { limits } = settings(env);
  return TOOL_RESULTS_PATH.test(path) ? Math.max(limits.maxBodyBytes, limits.maxToolResultBytes) : limits.maxBodyBytes;
}

/** The body limit middleware of each size, made once (a request only picks its own). */
const bodyLimits = new Map<number, MiddlewareHandler>();
function bodyLimitOf(maxSize: number): MiddlewareHandler {
  let limit = bodyLimits.get(maxSize);
  if (!limit) {
    limit = bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError("request_too_large", `The request body is larger than ${maxSize} bytes.`);
      },
    });
    bodyLimits.set(maxSize, limit);
  }
  return limit;
}

/** Each env object's malformed var is logged once (at the first request that finds it), then answered 500. */
const reportedMisconfiguration = new WeakSet<object>();

export function createApp(): OpenAPIHono<AppBindings> {
  const app = new OpenAPIHono<AppBindings>();

  // First: the request's span covers everything, its refusals included.
  app.use(httpSpan);
  app.use(requestId());
  app.use(async (c, next) => {
    await next();
    // Routes that build their own Response (streams, relayed upstream answers) lose the header
    // requestId() set on the context; every answer carries it, so it is put back here.
    if (c.res.status !== 101 && !c.res.headers.has("x-request-id")) {
      try {
        c.res.headers.set("x-request-id", c.get("requestId"));
      } catch {
        // A response with immutable headers (fetched as it is): left unchanged.
      }
    }
  });
  app.use(async (c, next) => {
    c.set("logger", new JsonAdminLogger({ requestId: c.get("requestId") }));
    await next();
  });
  app.use(pageHeaders);
  // The Messages wire answers every error in Anthropic's shape: put first, it sees every answer of its routes.
  app.use("/v1/messages/*", anthropicErrorShape);
  app.use("/agent/v1/messages/*", anthropicErrorShape);
  // Settings first: a malformed var answers every request, /healthz included, with its name.
  app.use(async (c, next) => {
    try {
      settings(c.env);
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error;
      if (!reportedMisconfiguration.has(c.env)) {
        reportedMisconfiguration.add(c.env);
        c.get("logger").addError("[settings]", error.message, [["variable", error.variable]]);
      }
      throw new ApiError("misconfigured", `The server is misconfigured: ${error.message}`);
    }
    await next();
  });
  app.use(originGuard);
  app.use(corsForListedOrigins);
  app.use(async (c, next) => bodyLimitOf(maxBodyBytes(c.env, c.req.path))(c, next));

  app.route("/", healthRoutes);
  app.use(d1Session);
  app.route("/", sessionSocketRoutes);
  app.route("/", a2aCardRoutes);
  app.route("/", signInRoutes);
  app.route("/", keySignInRoutes);
  app.route("/", authorizeRoutes);
  app.use("*", requireApiKey);
  // After the caller is known (keys are per caller), before every route that starts work.
  app.use("*", idempotency);
  app.route("/", sessionAuthRoutes);
  app.route("/", passthroughRoutes);
  app.route("/", messagesRoutes);
  app.route("/", modeRoutes);
  app.route("/", adminModeRoutes);
  app.route("/", adminModeVersionRoutes);
  app.route("/", adminMcpServerRoutes);
  app.route("/", adminModelRouteRoutes);
  app.route("/", adminHealthRoutes);
  app.route("/", adminSecretRoutes);
  app.route("/", adminAuditRoutes);
  app.route("/", adminKeyRoutes);
  app.route("/", adminUsageCallRoutes);
  app.route("/", adminUserRoutes);
  app.route("/", adminEvalRoutes);
  app.route("/", adminBenchOpsRoutes);
  app.route("/", systemPromptRoutes);
  app.route("/", grantRoutes);
  app.route("/", contextSessionRoutes);
  app.route("/", contextSearchRoutes);
  app.route("/", sessionManagementRoutes);
  app.route("/", sessionTurnRoutes);
  app.route("/", workflowRoutes);
  app.route("/", webhookRoutes);
  app.route("/", scheduleRoutes);
  app.route("/", memoryRoutes);
  app.route("/", adminMemoryRoutes);
  app.route("/", adminGuardrailRoutes);
  app.route("/", personExportRoutes);
  app.route("/", agentWireRoutes);
  app.route("/", responsesDoorRoutes);
  app.route("/", agentMessagesRoutes);
  app.route("/", agentMcpRoutes);
  app.route("/", a2aJsonRpcRoutes);
  app.route("/", a2aRestRoutes);
  describeA2A(app);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "An aptix API key: `Authorization: Bearer <key>`.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "anthropicApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An aptix API key as Anthropic's clients send it (read when there is no Authorization header).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "browserSession", {
    type: "apiKey",
    in: "cookie",
    name: "__Host-aptix_session",
    description:
      "The console's browser session after single sign-on (docs/auth.md); requests that change anything also carry its `X-CSRF-Token`.",
  });
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/openapi.json",
    tags: ["reference"],
    summary: "This document (the interactive reference is at /docs)",
    responses: { 200: { description: "The OpenAPI 3.1 document." }, ...errors(401) },
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "aptix-edge",
      version: "1",
      description:
        "An LLM agent backend on Cloudflare Workers: agent sessions (modes, tools, approvals, client hand-offs), " +
        "workflows, the mode catalog, an OpenAI-compatible passthrough (/v1), the agent on the OpenAI wire " +
        "(/agent/v1) and as an MCP server (/mcp). Errors have OpenAI's shape; the codes " +
        "are in docs/api.md. The session WebSocket's frames are in docs/protocol.md.",
    },
    security: [{ bearer: [] }, { browserSession: [] }],
  });

  app.notFound((c) => c.json(errorBody("route_not_found", `No route for ${c.req.method} ${quoted(c.req.path)}.`), 404));

  app.onError((error, c) => {
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
      return c.json(error.toBody(), error.status);
    }
    if (error instanceof HTTPException && error.status < 500) {
      // Hono's own refusals: @hono/zod-openapi's media type check of a JSON route, and the JSON validator's
      // unreadable body, are ours to name.
      if (error.status === 415) {
        const refusal = notJsonBody(c.req.header("content-type"));
        return c.json(refusal.toBody(), refusal.status);
      }
      if (error.status === 400 && /json/i.test(error.message)) {
        return c.json(errorBody("invalid_json", "The request body must be a JSON object."), 400);
      }
      return c.json(errorBody("invalid_request", error.message || "Bad request."), 400);
    }
    const logger = c.get("logger") ?? new JsonAdminLogger({ requestId: c.get("requestId") ?? "" });
    logger.addException("[app_onError]", error, [
      ["method", c.req.method],
      ["path", c.req.path],
    ]);
    if (error instanceof ModeCatalogError) {
      // The catalog's own words name the broken row for the operator; nothing else leaks.
      return c.json(errorBody("mode_catalog_corrupt", error.message), 500);
    }
    return c.json(
      errorBody(
        "internal_error",
        `The server failed to handle this request. Quote request id ${c.get("requestId") ?? "unknown"} when reporting it.`,
      ),
      500,
    );
  });

  return app;
}

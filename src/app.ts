// createApp(): middleware, the one error path, and the routes; the Worker and the tests serve the same app.

import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import { requireApiKey } from "./auth/middleware";
import { positiveIntVar } from "./env-vars";
import { ApiError, errorBody } from "./errors";
import type { AppBindings } from "./http";
import { ModeCatalogError } from "./modes/catalog-service";
import { JsonAdminLogger } from "./observability/admin-logger";
import { passthroughRoutes } from "./passthrough/routes";
import { quoted } from "./quote";
import { adminModeRoutes } from "./routes/admin-modes";
import { contextSessionRoutes } from "./routes/context-sessions";
import { healthRoutes } from "./routes/health";
import { modeRoutes } from "./routes/modes";
import { sessionSocketRoutes } from "./routes/session-socket";
import { systemPromptRoutes } from "./routes/system-prompts";
import { workflowRoutes } from "./routes/workflows";

const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/** Tool results carry whole files (a read of up to 1 MiB, JSON-escaped): their route takes more. */
const DEFAULT_MAX_TOOL_RESULT_BYTES = 10_485_760;
const TOOL_RESULTS_PATH = /^\/context\/sessions\/[^/]+\/tool-results$/;

const MaxBodyBytesVar = positiveIntVar(DEFAULT_MAX_BODY_BYTES);
const MaxToolResultBytesVar = positiveIntVar(DEFAULT_MAX_TOOL_RESULT_BYTES);

export function maxBodyBytes(env: Cloudflare.Env, path = ""): number {
  const general = MaxBodyBytesVar.parse(env.MAX_BODY_BYTES);
  if (!TOOL_RESULTS_PATH.test(path)) return general;
  return Math.max(general, MaxToolResultBytesVar.parse(env.MAX_TOOL_RESULT_BYTES));
}

export function createApp(): Hono<AppBindings> {
  const app = new Hono<AppBindings>();

  app.use(requestId());
  app.use(async (c, next) => {
    await next();
    // Routes that build their own Response (streams, relayed upstream answers) lose the header
    // requestId() set on the context; every answer carries it, so it is put back here.
    if (c.res.status !== 101 && !c.res.headers.has("x-request-id")) {
      try {
        c.res.headers.set("x-request-id", c.var.requestId);
      } catch {
        // A response with immutable headers (fetched as it is): left unchanged.
      }
    }
  });
  app.use(async (c, next) => {
    c.set("logger", new JsonAdminLogger({ requestId: c.var.requestId }));
    await next();
  });
  app.use(async (c, next) => {
    const maxSize = maxBodyBytes(c.env, c.req.path);
    return bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError(
          413,
          "invalid_request_error",
          `The request body is larger than ${maxSize} bytes.`,
          "request_too_large",
        );
      },
    })(c, next);
  });

  app.route("/", healthRoutes);
  app.route("/", sessionSocketRoutes);
  app.use("*", requireApiKey);
  app.route("/", passthroughRoutes);
  app.route("/", modeRoutes);
  app.route("/", adminModeRoutes);
  app.route("/", systemPromptRoutes);
  app.route("/", contextSessionRoutes);
  app.route("/", workflowRoutes);

  app.notFound((c) =>
    c.json(errorBody(`No route for ${c.req.method} ${quoted(c.req.path)}.`, "not_found_error", "route_not_found"), 404),
  );

  app.onError((error, c) => {
    if (error instanceof ApiError) {
      for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
      return c.json(error.toBody(), error.status);
    }
    if (error instanceof HTTPException && error.status < 500) {
      return c.json(errorBody(error.message || "Bad request.", "invalid_request_error"), error.status);
    }
    const logger = c.var.logger ?? new JsonAdminLogger({ requestId: c.var.requestId ?? "" });
    logger.addException("[app_onError]", error, [
      ["method", c.req.method],
      ["path", c.req.path],
    ]);
    if (error instanceof ModeCatalogError) {
      // The catalog's own words name the broken row for the operator; nothing else leaks.
      return c.json(errorBody(error.message, "server_error", "mode_catalog_corrupt"), 500);
    }
    return c.json(
      errorBody(
        `The server failed to handle this request. Quote request id ${c.var.requestId ?? "unknown"} when reporting it.`,
        "server_error",
        "internal_error",
      ),
      500,
    );
  });

  return app;
}

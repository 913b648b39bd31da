// Shared request plumbing for routes: the Hono context type, the route factory whose one validation hook turns
// a zod failure into our error, and the pieces every route declaration uses (bodies, answers, errors).
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { BOOKMARK, BOOKMARK_HEADER, dbSession } from "./db";
import { ApiError, type ErrorCode } from "./errors";
import type { JsonAdminLogger } from "./observability/admin-logger";
import type { Principal } from "./principal";
import { quoted } from "./quote";
import { type FieldProblem, fieldMessage, firstProblem } from "./zod-issues";

export interface AppBindings {
  Bindings: Cloudflare.Env;
  Variables: {
    principal: Principal;
    requestId: string;
    logger: JsonAdminLogger;
    /** The request's session of D1 (src/db.ts): reads from the nearest replica, at least as new as the client's bookmark. */
    db: D1DatabaseSession;
  };
}

export type AppContext = Context<AppBindings>;

const WHERE: Record<string, string> = { json: "request body", query: "query", param: "path", header: "headers" };

/** The ApiError for a zod failure in `where` ("request body"): an unknown field is `unknown_field`. */
export function zodFailure(problem: FieldProblem, where: string, code: ErrorCode = "invalid_request"): ApiError {
  return new ApiError(problem.unknownField ? "unknown_field" : code, fieldMessage(problem, where), {
    param: problem.param,
  });
}

/** Whether a `content-type` says JSON: `application/json`, with or without parameters (`; charset=utf-8`). */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  return contentType?.split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** The one refusal of a body that is not sent as JSON to a route that takes JSON. */
export function notJsonBody(contentType: string | null | undefined): ApiError {
  const sent = contentType ? `this request's is ${quoted(contentType)}` : "this request has none";
  return new ApiError(
    "unsupported_media_type",
    `The request body must be JSON, sent with content-type: application/json (${sent}).`,
  );
}

/**
 * A route that takes a JSON body refuses any other (415), whatever the body holds. Every route declared with
 * `jsonBody` gets here through the validation hook of `routes()` (and `app.onError` for the media type check
 * @hono/zod-openapi makes before it); the passthrough, whose bodies no validator reads, calls it itself.
 */
export function requireJsonBody(c: Context): void {
  const contentType = c.req.header("content-type");
  if (!isJsonContentType(contentType)) throw notJsonBody(contentType);
}

/** Routes are declared with their schemas (validation, types and /openapi.json from one source). */
export function routes(): OpenAPIHono<AppBindings> {
  return new OpenAPIHono<AppBindings>({
    defaultHook: (result, c) => {
      // A body without a JSON content type is validated as `{}` by Hono: refused here before it counts as one.
      if (result.target === "json") requireJsonBody(c);
      if (!result.success) throw zodFailure(firstProblem(result.error), WHERE[result.target] ?? result.target);
    },
  });
}

/** zod-parses `value`; the error names the field path and what is wrong with it. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw zodFailure(firstProblem(parsed.error), what);
}

/** An OpenAI-shaped error body, as /openapi.json describes every error answer. */
export const ErrorResponse = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      code: z.string().nullable(),
      param: z.string().nullable(),
    }),
  })
  .meta({ id: "Error" });

/** A JSON request body for a route declaration. */
export function jsonBody<S extends z.ZodType>(schema: S, description: string) {
  return { body: { content: { "application/json": { schema } }, required: true, description } };
}

/** A JSON answer for a route declaration. */
export function json<S extends z.ZodType>(schema: S, description: string) {
  return { content: { "application/json": { schema } }, description };
}

/** The error answers a route declares (the codes each can carry are in docs/api.md). */
export function errors(...statuses: number[]) {
  const described: Record<number, string> = {
    400: "The request is wrong; `param` names the field.",
    401: "No key, or an unknown or revoked key.",
    403: "The key lacks the route's scope.",
    404: "No such resource (for another org's session too).",
    405: "The route does not take this method; Allow names the one it does.",
    409: "The session cannot take this now.",
    413: "The body is too large.",
    415: "The body is not sent as JSON (`content-type: application/json`).",
    429: "The key's model call budget is spent; see Retry-After.",
    500: "Unexpected, or a misconfigured server.",
    502: "The upstream LLM failed.",
    504: "The upstream LLM was too slow.",
  };
  return Object.fromEntries(statuses.map((s) => [s, json(ErrorResponse, described[s] ?? "An error.")]));
}

/** The security requirement of every route but /healthz and the sign-in flow's: a key, or a browser session. */
export const BEARER: { [scheme: string]: string[] }[] = [{ bearer: [] }, { browserSession: [] }];

/**
 * Opens the request's session (`c.get("db")`) at the bookmark the client sent, and answers with the session's
 * bookmark after the route ran (a write moves it forward), for the client to send on its next request.
 */
export const d1Session = createMiddleware<AppBindings>(async (c, next) => {
  // An empty header is no bookmark.
  const sent = c.req.header(BOOKMARK_HEADER)?.trim() || undefined;
  if (sent !== undefined && !BOOKMARK.test(sent)) {
    throw new ApiError(
      "invalid_request",
      `The ${BOOKMARK_HEADER} header is not a D1 bookmark: send back the value of this header from an earlier answer, or leave it out.`,
      { param: BOOKMARK_HEADER },
    );
  }
  const db = dbSession(c.env.DB, sent);
  c.set("db", db);
  await next();
  const bookmark = db.getBookmark();
  if (!bookmark || c.res.status === 101) return;
  try {
    c.res.headers.set(BOOKMARK_HEADER, bookmark);
  } catch {
    // A response with immutable headers (a relayed upstream answer): it goes without the bookmark.
  }
});

// CORS for the web apps CORS_ALLOWED_ORIGINS lists (a company's own chat app at another origin): Hono's cors
// middleware answers their preflights and marks every answer to them, errors included, as readable by them. Their
// requests carry an API key in the Authorization header, never a cookie: no credentials mode, so a listed origin
// can call the API only with a key its app holds (docs/api.md#browsers-of-other-origins-cors). An origin that is not
// listed never gets here: the origin guard refuses it first.
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppBindings } from "../http";
import { settings } from "../settings";

/**
 * The headers a web app sends: its key (as a bearer token, or as `x-api-key` from Anthropic's clients), JSON bodies,
 * the session it continues, its D1 bookmark, SSE resumption.
 */
const ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "accept",
  "x-aptix-session",
  "x-d1-bookmark",
  "last-event-id",
  "x-api-key",
];

/**
 * Headers the official SDKs add in a browser, by family: their own description and retry count (`x-stainless-*`,
 * from both the `openai` and `@anthropic-ai/sdk` clients) and their API's version and beta flags (`anthropic-*`,
 * `openai-*`). A preflight asking for one of these is answered with it; the server reads only what it knows.
 */
const SDK_HEADER_PREFIXES = ["x-stainless-", "anthropic-", "openai-"];

/** The answer headers a web app may read: the session an agent turn used, the bookmark, the request id, limits, routes. */
const EXPOSE_HEADERS = [
  "x-aptix-session",
  "x-d1-bookmark",
  "x-request-id",
  "request-id",
  "retry-after",
  "x-aptix-route",
  "x-aptix-route-failed",
];

/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/** The headers a preflight is answered with: ours, and those of the SDKs' families it asks for. */
export function allowedHeaders(requested: string | undefined): string[] {
  const asked = (requested ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => SDK_HEADER_PREFIXES.some((prefix) => name.startsWith(prefix)));
  return [...ALLOW_HEADERS, ...new Set(asked)];
}

const corsWith = (allowHeaders: string[]) =>
  cors({
    origin: (origin) => origin,
    allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    allowHeaders,
    exposeHeaders: EXPOSE_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    credentials: false,
  });

const listedCors = corsWith(ALLOW_HEADERS);

/** CORS for a request from a listed origin; every other request (same origin, no origin) passes as it is. */
export const corsForListedOrigins: MiddlewareHandler<AppBindings> = async (c, next) => {
  const origin = c.req.header("origin");
  if (origin === undefined || !settings(c.env).http.corsAllowedOrigins.includes(origin)) return next();
  const requested = c.req.method === "OPTIONS" ? c.req.header("access-control-request-headers") : undefined;
  const headers = allowedHeaders(requested);
  return (headers.length === ALLOW_HEADERS.length ? listedCors : corsWith(headers))(c, next);
};

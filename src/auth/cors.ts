// CORS for the web apps CORS_ALLOWED_ORIGINS lists (a company's own chat app at another origin): Hono's cors
// middleware answers their preflights and marks every answer to them, errors included, as readable by them. Their
// requests carry an API key in the Authorization header, never a cookie: no credentials mode, so a listed origin
// can call the API only with a key its app holds (docs/api.md#browsers-of-other-origins-cors). An origin that is not
// listed never gets here: the origin guard refuses it first.
import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppBindings } from "../http";
import { settings } from "../settings";

/** The headers a web app sends: its key, JSON bodies, the session it continues, its D1 bookmark, SSE resumption. */
const ALLOW_HEADERS = ["authorization", "content-type", "accept", "x-aptix-session", "x-d1-bookmark", "last-event-id"];

/** The answer headers a web app may read: the session an agent turn used, the bookmark, the request id, limits, routes. */
const EXPOSE_HEADERS = [
  "x-aptix-session",
  "x-d1-bookmark",
  "x-request-id",
  "retry-after",
  "x-aptix-route",
  "x-aptix-route-failed",
];

/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_S = 600;

const listedCors = cors({
  origin: (origin) => origin,
  allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
  allowHeaders: ALLOW_HEADERS,
  exposeHeaders: EXPOSE_HEADERS,
  maxAge: PREFLIGHT_MAX_AGE_S,
  credentials: false,
});

/** CORS for a request from a listed origin; every other request (same origin, no origin) passes as it is. */
export const corsForListedOrigins: MiddlewareHandler<AppBindings> = async (c, next) => {
  const origin = c.req.header("origin");
  if (origin === undefined || !settings(c.env).http.corsAllowedOrigins.includes(origin)) return next();
  return listedCors(c, next);
};

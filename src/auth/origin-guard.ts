// DNS rebinding and cross-origin browser pages. A page of another site that makes its name resolve to a machine
// running `npm start` reaches the Worker with its own Host, and the local key is a known one (`dev-key`); so where
// ALLOWED_HOSTS names the hosts the Worker answers to (npm run dev: loopback), any other Host is refused. And a
// browser request that says it comes from another origin is refused (the MCP transport requires servers to
// validate Origin), unless CORS_ALLOWED_ORIGINS lists that origin: a web chat app of the organisation's, answered
// with CORS (src/auth/cors.ts). One exception: a session's WebSocket, which a web app of any origin opens with a
// single-use ticket in its URL (the ticket is the credential; browsers cannot send a key on a socket). Clients that
// are not browsers send no Origin and are unaffected.
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors";
import type { AppBindings } from "../http";
import { quoted } from "../quote";
import { settings } from "../settings";

/** Why `request` is refused for its Host or Origin, or null. Throws SettingsError for a malformed setting. */
export function hostOrOriginRefusal(request: Request, env: object): ApiError | null {
  const url = new URL(request.url);
  const { allowedHosts, corsAllowedOrigins } = settings(env).http;
  if (allowedHosts.length > 0 && !allowedHosts.includes(url.hostname)) {
    return new ApiError(
      "host_not_allowed",
      `This server does not answer to the host ${quoted(url.hostname)}; it answers to ${allowedHosts.join(", ")} (ALLOWED_HOSTS).`,
    );
  }
  const origin = request.headers.get("origin");
  const socket = request.headers.get("upgrade")?.toLowerCase() === "websocket";
  if (origin !== null && origin !== url.origin && !socket && !corsAllowedOrigins.includes(origin)) {
    const listed = corsAllowedOrigins.length > 0 ? `, or of ${corsAllowedOrigins.join(", ")}` : "";
    return new ApiError(
      "origin_not_allowed",
      `Requests from the origin ${quoted(origin)} are refused: only pages of ${url.origin} itself${listed} may call it (CORS_ALLOWED_ORIGINS).`,
    );
  }
  return null;
}

export const originGuard: MiddlewareHandler<AppBindings> = async (c, next) => {
  const refusal = hostOrOriginRefusal(c.req.raw, c.env);
  if (refusal) throw refusal;
  await next();
};

/**
 * The forms that sign a browser in or answer a consent page are taken from this origin's own pages only, never from
 * another origin CORS_ALLOWED_ORIGINS lists: such a page could otherwise sign a person's browser in as someone else
 * (login CSRF). Clients that are not browsers send neither header.
 */
export function requireOwnPage(request: Request): void {
  const url = new URL(request.url);
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  const foreign = origin !== null ? origin !== url.origin : site !== null && site !== "same-origin" && site !== "none";
  if (foreign) {
    throw new ApiError(
      "origin_not_allowed",
      `This form is taken only from pages of ${url.origin} itself (it came from ${quoted(origin ?? site ?? "")}).`,
    );
  }
}

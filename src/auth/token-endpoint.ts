// The front of the token endpoint (/oauth/token) and of the revocation endpoint (/oauth/revoke, RFC 7009), before
// the authorization server (src/auth/oauth.ts) reads a request: the body and the ids in it bounded
// (src/auth/oauth-bounds.ts), /oauth/revoke taken as a revocation only and handed to the server's token endpoint
// (which revokes a `token` sent without a `grant_type`), a revoked access token forgotten by this isolate at once,
// and a refresh token the server rotated away refused, its reuse ending the grant (src/auth/refresh-token-reuse.ts).
import type { Db } from "../db";
import { JsonAdminLogger } from "../observability/admin-logger";
import { boundedBody, isFormContentType, MAX_OAUTH_BODY_BYTES, tokenRequestRefusal } from "./oauth-bounds";
import { oauthError } from "./oauth-error";
import { rememberRotated, rotatedAway, type ServerGrant, serverGrantOf } from "./refresh-token-reuse";

export const TOKEN_PATH = "/oauth/token";
export const REVOKE_PATH = "/oauth/revoke";

/** What the front needs of the OAuth provider in front of the app. */
export interface TokenEndpointParts {
  /** The authorization server's token endpoint. */
  server: (request: Request) => Promise<Response>;
  /** Forgets an access token this isolate verified (it is being revoked). */
  forgetToken: (token: string) => Promise<void>;
  /** Ends a grant: aptix's record of it and the server's. */
  endGrant: (grant: ServerGrant) => Promise<void>;
  /** Where rotated refresh tokens are remembered (read where they are written). */
  db: Db;
  /** How long a refresh token lives (a rotated one is remembered as long). */
  refreshTokenLifetimeMs: number;
}

export async function tokenEndpoint(request: Request, url: URL, parts: TokenEndpointParts): Promise<Response> {
  // The server's token endpoint answers /oauth/revoke's requests too: it revokes a `token` sent without a grant_type.
  const revoking = url.pathname === REVOKE_PATH;
  // Another method or body the server refuses in its own words (405, 400) without reading anything.
  if (request.method !== "POST" || !isFormContentType(request.headers.get("content-type"))) {
    return parts.server(revoking ? new Request(new URL(TOKEN_PATH, url), request) : request);
  }
  const body = await boundedBody(request, MAX_OAUTH_BODY_BYTES);
  if (body === null) {
    return oauthError(413, "invalid_request", `The request body is larger than ${MAX_OAUTH_BODY_BYTES} bytes.`);
  }
  const form = new URLSearchParams(body);
  const refusal = tokenRequestRefusal(form, request.headers.get("authorization"));
  if (refusal) return refusal;
  const forwarded = revoking
    ? new Request(new URL(TOKEN_PATH, url), { method: "POST", headers: request.headers, body })
    : request;
  const token = form.get("token");
  if (revoking) {
    if (form.has("grant_type")) {
      return oauthError(400, "invalid_request", "The revocation endpoint takes a token to revoke, not a grant_type.");
    }
    if (!token) return oauthError(400, "invalid_request", "token is required: the token to revoke.");
  }
  // The server's rule for a revocation: a token and no grant_type.
  if (token && !form.get("grant_type")) await parts.forgetToken(token);
  const refreshToken = form.get("grant_type") === "refresh_token" ? form.get("refresh_token") : null;
  if (!refreshToken) return parts.server(forwarded);
  const reused = await rotatedAway(parts.db, refreshToken);
  if (reused) return endReusedGrant(reused, parts);
  const response = await parts.server(forwarded);
  if (response.status !== 200) return response;
  // Two requests that used the same refresh token at once both got new tokens: the second to be remembered ends it.
  if (await rememberRotated(parts.db, refreshToken, parts.refreshTokenLifetimeMs)) return response;
  const grant = serverGrantOf(refreshToken);
  return grant ? endReusedGrant(grant, parts) : response;
}

async function endReusedGrant(grant: ServerGrant, parts: TokenEndpointParts): Promise<Response> {
  new JsonAdminLogger({ requestId: "" }).addCustomEvent(
    "Warning",
    "[oauth_refresh_reuse]",
    "A refresh token was used again after it was rotated away: its grant is ended.",
    [["kvGrantId", grant.kvGrantId]],
  );
  await parts.endGrant(grant);
  return oauthError(
    400,
    "invalid_grant",
    "This refresh token was used before: the grant it belongs to is ended; authorize again.",
  );
}

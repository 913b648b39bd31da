// The front of the token endpoint (/oauth/token) and of the revocation endpoint (/oauth/revoke, RFC 7009), before
// the authorization server (src/auth/oauth.ts) reads a request: the body and the ids in it bounded
// (src/auth/oauth-bounds.ts), /oauth/revoke taken as a revocation only and handed to the server's token endpoint
// (which revokes a `token` sent without a `grant_type`), and a revoked access token forgotten by this isolate at once.
import { boundedBody, isFormContentType, MAX_OAUTH_BODY_BYTES, tokenRequestRefusal } from "./oauth-bounds";
import { oauthError } from "./oauth-error";

export const TOKEN_PATH = "/oauth/token";
export const REVOKE_PATH = "/oauth/revoke";

/** What the front needs of the OAuth front door. */
export interface TokenEndpointParts {
  /** The authorization server's token endpoint. */
  server: (request: Request) => Promise<Response>;
  /** Forgets an access token this isolate verified (it is being revoked). */
  forgetToken: (token: string) => Promise<void>;
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
  return parts.server(forwarded);
}

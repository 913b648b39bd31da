// The front of the token endpoint (/oauth/token), before the authorization server (src/auth/oauth.ts) reads a
// request: the body and the ids in it bounded (src/auth/oauth-bounds.ts), and an access token being revoked (RFC
// 7009: a `token` sent without a `grant_type`) forgotten by this isolate at once.
import { boundedBody, isFormContentType, MAX_OAUTH_BODY_BYTES, tokenRequestRefusal } from "./oauth-bounds";
import { oauthError } from "./oauth-error";

export const TOKEN_PATH = "/oauth/token";

/** What the front needs of the OAuth front door. */
export interface TokenEndpointParts {
  /** The authorization server's token endpoint. */
  server: (request: Request) => Promise<Response>;
  /** Forgets an access token this isolate verified (it is being revoked). */
  forgetToken: (token: string) => Promise<void>;
}

export async function tokenEndpoint(request: Request, parts: TokenEndpointParts): Promise<Response> {
  // Another method or body the server refuses in its own words (405, 400) without reading anything.
  if (request.method !== "POST" || !isFormContentType(request.headers.get("content-type"))) {
    return parts.server(request);
  }
  const body = await boundedBody(request, MAX_OAUTH_BODY_BYTES);
  if (body === null) {
    return oauthError(413, "invalid_request", `The request body is larger than ${MAX_OAUTH_BODY_BYTES} bytes.`);
  }
  const form = new URLSearchParams(body);
  const refusal = tokenRequestRefusal(form, request.headers.get("authorization"));
  if (refusal) return refusal;
  const token = form.get("token");
  // The server's rule for a revocation: a token and no grant_type.
  if (token && !form.get("grant_type")) await parts.forgetToken(token);
  return parts.server(request);
}

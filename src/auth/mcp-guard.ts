// The guard of /mcp behind the OAuth provider (src/auth/oauth.ts): an access token the provider verified is kept by
// the isolate for AUTH_CACHE_TTL_MS, the request contexts whose props the provider (or this cache) filled are the
// only ones /mcp trusts, a token shaped as the provider's but naming ids longer than any it issues is refused before
// it reaches KV, and /mcp's refusals are answered in aptix's error shape, with the challenge that starts OAuth.
import { z } from "zod";
import { errorBody } from "../errors";
import { ExpiringMap } from "../isolate-cache";
import { sha256Hex } from "../secret-text";
import { AUTH_CACHE_TTL_MS } from "./api-keys";
import { namesTooLong } from "./oauth-bounds";
import { oauthError } from "./oauth-error";
import { GrantProps } from "./oauth-grants";

/** What /mcp is handed: the request, the provider's handling of it, the app behind it. */
export interface McpCall {
  request: Request;
  url: URL;
  env: Cloudflare.Env;
  ctx: ExecutionContext;
  /** The provider: checks the token, then hands the request to the app. */
  server: (request: Request) => Promise<Response>;
  app: { fetch: (request: Request, env: Cloudflare.Env, ctx: ExecutionContext) => Response | Promise<Response> };
  /** The scopes /mcp needs (named in the challenge). */
  scopes: readonly string[];
}

/**
 * Access tokens the provider verified, by origin and the token's SHA-256: for AUTH_CACHE_TTL_MS (never past the
 * token's own expiry) an isolate hands a token it knows to /mcp without the provider's KV read and decryption, as it
 * trusts a key it read. aptix's own grant check still runs on every request (revoking a grant ends it at once);
 * a token revoked at the token endpoint (RFC 7009) stops within the same bound as a revoked key.
 */
const verifiedTokens = new ExpiringMap<string, { props: unknown; auth: unknown }>(1_000);

/** A bearer as the provider reads it. */
const BEARER = /^Bearer[\t ]+([^\s,]+)$/i;

/** The provider's tokens are `userId:grantId:secret`; anything else is an API key (or nothing it knows). */
const ISSUED_TOKEN = /^[^\s:,]+:[^\s:,]+:[^\s:,]+$/;

/** The key `token` is kept under, or null for one not shaped as the provider's. */
async function tokenCacheKey(token: string | undefined, url: URL): Promise<string | null> {
  if (!token || !ISSUED_TOKEN.test(token)) return null;
  return `${url.origin} ${await sha256Hex(token)}`;
}

/** Keeps what the provider verified of a token /mcp just served (its props and auth, on the context). */
function rememberVerified(key: string, ctx: ExecutionContext, now: number): void {
  const props: unknown = Reflect.get(ctx, "props");
  const auth = z.object({ expiresAt: z.number() }).safeParse(Reflect.get(ctx, "auth"));
  if (!GrantProps.safeParse(props).success || !auth.success) return;
  const until = Math.min(now + AUTH_CACHE_TTL_MS, auth.data.expiresAt * 1000);
  verifiedTokens.set(key, { props, auth: Reflect.get(ctx, "auth") }, until);
}

/**
 * The requests whose context the provider (or this guard, from what the provider verified) filled: only
 * theirs carry props /mcp may trust. Any other context's props (a service binding's, say) are not a grant's.
 */
const checkedContexts = new WeakSet<object>();

export function checkedByOAuth(ctx: object): boolean {
  return checkedContexts.has(ctx);
}

/** A token being revoked (RFC 7009) is forgotten here at once. */
export async function forgetVerifiedToken(token: string, url: URL): Promise<void> {
  const key = await tokenCacheKey(token, url);
  if (key) verifiedTokens.delete(key);
}

/** /mcp: a token this isolate verified goes straight to the app; others are the provider's to check. */
export async function mcpThroughProvider({ request, url, env, ctx, server, app, scopes }: McpCall): Promise<Response> {
  checkedContexts.add(ctx);
  const bearer = BEARER.exec(request.headers.get("authorization") ?? "")?.[1];
  if (bearer && namesTooLong(bearer)) return inAptixShape(request, notIssuedHere(url, scopes));
  const now = Date.now();
  const key = await tokenCacheKey(bearer, url);
  const known = key ? verifiedTokens.get(key, now) : undefined;
  if (known) {
    Reflect.set(ctx, "props", known.props);
    Reflect.set(ctx, "auth", known.auth);
    return inAptixShape(request, await app.fetch(request, env, ctx));
  }
  const response = await server(request);
  if (key && response.ok) rememberVerified(key, ctx, now);
  return inAptixShape(request, response);
}

/**
 * The provider's answer to a token it does not know, for one shaped as its tokens but naming ids longer than any it
 * issues (it would look it up in KV under a key KV cannot hold): 401 with the challenge that starts OAuth.
 */
function notIssuedHere(url: URL, scopes: readonly string[]): Response {
  const challenge = [
    'Bearer realm="OAuth"',
    `resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`,
    'error="invalid_token"',
    `scope="${scopes.join(" ")}"`,
    'error_description="Invalid access token"',
  ].join(", ");
  return oauthError(401, "invalid_token", "Invalid access token", { "www-authenticate": challenge });
}

/**
 * /mcp's refusals in aptix's error shape: the provider answers a request without a token with an empty 401, and a
 * token it does not know with OAuth's `{"error": "invalid_token"}`; their challenge (WWW-Authenticate) stays.
 * The OAuth endpoints keep RFC 6749's shape, which OAuth clients read.
 */
async function inAptixShape(request: Request, response: Response): Promise<Response> {
  if (response.status !== 401 && response.status !== 403) return response;
  const text = await response.clone().text();
  const refusal = z
    .object({ error: z.string(), error_description: z.string().optional() })
    .safeParse(text ? safeJson(text) : {});
  if (text && !refusal.success) return response;
  const description = refusal.success ? refusal.data.error_description : undefined;
  const body =
    response.status === 403
      ? errorBody("insufficient_scope", description ?? "This token lacks the scope /mcp needs.")
      : request.headers.has("authorization")
        ? errorBody("invalid_access_token", `${description ?? "Invalid access token"}.`.replace(/\.\.$/, "."))
        : errorBody(
            "missing_api_key",
            "Missing credentials: send an API key or an OAuth access token as 'Authorization: Bearer <token>' (an MCP client gets one by OAuth: see WWW-Authenticate).",
          );
  const headers = new Headers(response.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: left as it is.
    return null;
  }
}

// The guard of the OAuth protected resources (/mcp, and /a2a for a token of the server's shape) behind their resource
// servers (src/auth/oauth.ts): an access token the server verified for a resource is kept by the isolate for
// AUTH_CACHE_TTL_MS, the request contexts whose props the server (or this cache) filled for a resource are the only
// ones that resource trusts, a token shaped as the server's but naming ids longer than any it issues is refused
// before it reaches KV, and the refusals are answered in aptix's error shape, with the challenge that starts OAuth.
import { z } from "zod";
import { errorBody } from "../errors";
import { ExpiringMap } from "../isolate-cache";
import { sha256Hex } from "../secret-text";
import { AUTH_CACHE_TTL_MS } from "./api-keys";
import { namesTooLong } from "./oauth-bounds";
import { oauthError } from "./oauth-error";
import { GrantProps } from "./oauth-grants";

/** What a protected resource is handed: the request, its resource server's handling of it, the app behind it. */
export interface ResourceCall {
  request: Request;
  url: URL;
  env: Cloudflare.Env;
  ctx: ExecutionContext;
  /** The resource server: checks the token (its audience must be this resource), then hands the request to the app. */
  server: (request: Request) => Promise<Response>;
  app: { fetch: (request: Request, env: Cloudflare.Env, ctx: ExecutionContext) => Response | Promise<Response> };
  /** The resource's path under the origin (/mcp, /a2a). */
  path: string;
}

/** The scopes any access to a resource needs (named in the challenge). */
const REQUIRED_SCOPES = ["chat"] as const;

/**
 * Access tokens the server verified, by resource (origin and path) and the token's SHA-256 (a token verified for
 * /mcp is not one for /a2a): for AUTH_CACHE_TTL_MS (never past the
 * token's own expiry) an isolate hands a token it knows to /mcp without the provider's KV read and decryption, as it
 * trusts a key it read. aptix's own grant check still runs on every request (revoking a grant ends it at once);
 * a token revoked at the token endpoint (RFC 7009) stops within the same bound as a revoked key.
 */
const verifiedTokens = new ExpiringMap<string, { props: unknown; auth: unknown }>(1_000);

/** A bearer as the provider reads it. */
const BEARER = /^Bearer[\t ]+([^\s,]+)$/i;

/** The provider's tokens are `userId:grantId:secret`; anything else is an API key (or nothing it knows). */
export const ISSUED_TOKEN = /^[^\s:,]+:[^\s:,]+:[^\s:,]+$/;

/** Whether `request` carries a bearer shaped as the server's tokens. */
export function issuedBearer(request: Request): boolean {
  const bearer = BEARER.exec(request.headers.get("authorization") ?? "")?.[1];
  return bearer !== undefined && ISSUED_TOKEN.test(bearer);
}

/** The key `token` is kept under for the resource at `path`, or null for one not shaped as the provider's. */
async function tokenCacheKey(token: string | undefined, url: URL, path: string): Promise<string | null> {
  if (!token || !ISSUED_TOKEN.test(token)) return null;
  return `${url.origin}${path} ${await sha256Hex(token)}`;
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
 * The requests whose context the server (or this guard, from what the server verified) filled, with the resource
 * (its path) they were checked for: only theirs carry props that resource may trust. Any other context's props (a
 * service binding's, say) are not a grant's.
 */
const checkedContexts = new WeakMap<object, string>();

/** Whether the props on `ctx` are of a token checked for the resource `path` is under. */
export function checkedByOAuth(ctx: object, path: string): boolean {
  const resource = checkedContexts.get(ctx);
  return resource !== undefined && (path === resource || path.startsWith(`${resource}/`));
}

/** The resources whose verified tokens are kept here. */
const RESOURCE_PATHS = ["/mcp", "/a2a"] as const;

/** A token being revoked (RFC 7009) is forgotten here at once, for every resource. */
export async function forgetVerifiedToken(token: string, url: URL): Promise<void> {
  for (const path of RESOURCE_PATHS) {
    const key = await tokenCacheKey(token, url, path);
    if (key) verifiedTokens.delete(key);
  }
}

/** A protected resource: a token this isolate verified for it goes straight to the app; others are the server's. */
export async function throughResourceServer({ request, url, env, ctx, server, app, path }: ResourceCall) {
  checkedContexts.set(ctx, path);
  const bearer = BEARER.exec(request.headers.get("authorization") ?? "")?.[1];
  if (bearer && namesTooLong(bearer)) return inAptixShape(request, notIssuedHere(url, path), path);
  const now = Date.now();
  const key = await tokenCacheKey(bearer, url, path);
  const known = key ? verifiedTokens.get(key, now) : undefined;
  if (known) {
    Reflect.set(ctx, "props", known.props);
    Reflect.set(ctx, "auth", known.auth);
    return inAptixShape(request, await app.fetch(request, env, ctx), path);
  }
  const response = await server(request);
  if (key && response.ok) rememberVerified(key, ctx, now);
  return inAptixShape(request, response, path);
}

/** The Bearer challenge of the resource at `path`: where its metadata is, and the scopes to ask for. */
export function challengeOf(url: URL, path: string, scopes: readonly string[], invalidToken: boolean): string {
  return [
    'Bearer realm="OAuth"',
    `resource_metadata="${url.origin}/.well-known/oauth-protected-resource${path}"`,
    ...(invalidToken ? ['error="invalid_token"'] : []),
    `scope="${scopes.join(" ")}"`,
    ...(invalidToken ? ['error_description="Invalid access token"'] : []),
  ].join(", ");
}

/**
 * The provider's answer to a token it does not know, for one shaped as its tokens but naming ids longer than any it
 * issues (it would look it up in KV under a key KV cannot hold): 401 with the challenge that starts OAuth.
 */
function notIssuedHere(url: URL, path: string): Response {
  const challenge = challengeOf(url, path, REQUIRED_SCOPES, true);
  return oauthError(401, "invalid_token", "Invalid access token", { "www-authenticate": challenge });
}

/**
 * A resource's refusals in aptix's error shape: the server answers a request without a token with an empty 401, and a
 * token it does not know with OAuth's `{"error": "invalid_token"}`; their challenge (WWW-Authenticate) stays.
 * The OAuth endpoints keep RFC 6749's shape, which OAuth clients read.
 */
async function inAptixShape(request: Request, response: Response, path: string): Promise<Response> {
  if (response.status !== 401 && response.status !== 403) return response;
  const text = await response.clone().text();
  const refusal = z
    .object({ error: z.string(), error_description: z.string().optional() })
    .safeParse(text ? safeJson(text) : {});
  if (text && !refusal.success) return response;
  const description = refusal.success ? refusal.data.error_description : undefined;
  const body =
    response.status === 403
      ? errorBody("insufficient_scope", description ?? `This token lacks the scope ${path} needs.`)
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

// OAuth 2.1 for /mcp, by Cloudflare's @cloudflare/workers-oauth-provider. It covers the protocol: the 401 with
// WWW-Authenticate and resource_metadata, protected resource metadata (RFC 9728, at
// /.well-known/oauth-protected-resource/mcp), authorization server metadata (RFC 8414), the token endpoint (code
// with PKCE S256, refresh tokens rotated, revocation per RFC 7009), resource indicators (RFC 8707: a token is bound
// to <origin>/mcp and refused elsewhere), dynamic client registration (RFC 7591) and Client ID Metadata
// Documents, exact redirect URI matching (http: to loopback only), and its records in KV (OAUTH_KV) hashed and
// encrypted. aptix adds: the authorize step (sign-in and the consent page, src/routes/authorize.ts), PKCE for every
// client (the library lets a confidential client skip it), API keys accepted as bearer tokens on /mcp as before,
// its own record of each grant (src/auth/oauth-grants.ts) checked on every request and at refresh, so revoking a
// grant or disabling its user ends the client's access at once, and errors in aptix's shape on /mcp.
//
// The provider is built per origin (its resource is `<origin>/mcp`); an origin it cannot serve (plain http: off
// loopback) has no OAuth, and API keys work there as everywhere.
import {
  ExternalTokenError,
  getOAuthApi,
  OAuthError,
  type OAuthHelpers,
  OAuthProvider,
  type OAuthProviderOptions,
} from "@cloudflare/workers-oauth-provider";
import { z } from "zod";
import type { Db } from "../db";
import { errorBody } from "../errors";
import { ExpiringMap } from "../isolate-cache";
import { JsonAdminLogger } from "../observability/admin-logger";
import { sha256Hex } from "../secret-text";
import { isLoopbackHost } from "../settings";
import { AUTH_CACHE_TTL_MS, authenticateApiKey } from "./api-keys";
import { checkGrant, GrantProps, listGrantRecords, oauthUserId, revokeGrants } from "./oauth-grants";
import { hostOrOriginRefusal } from "./origin-guard";

/** The scopes an MCP client may be granted: /mcp needs `chat`. */
export const OAUTH_SCOPES = ["chat"] as const;
/** How long an access token lasts; its refresh token (rotated at each use) lasts 30 days. */
export const ACCESS_TOKEN_TTL_S = 600;
const REFRESH_TOKEN_TTL_S = 30 * 86_400;

export const AUTHORIZE_PATH = "/authorize";
const TOKEN_PATH = "/oauth/token";
const REGISTER_PATH = "/oauth/register";

/**
 * The paths the provider answers itself (the rest reach the app directly). The metadata, token and registration
 * endpoints are for MCP clients of any origin (browser-based ones too: they carry no cookie to abuse); /mcp
 * checks Origin as every route does.
 */
const PROVIDER_PATHS =
  /^\/(mcp|oauth\/(token|register)|\.well-known\/oauth-(authorization-server|protected-resource)(\/.*)?)$/;

type Handler = {
  fetch: (request: Request, env: Cloudflare.Env, ctx: ExecutionContext) => Response | Promise<Response>;
};

/** Whether an origin can have OAuth: https:, or http: on loopback (the provider refuses any other resource). */
export function servesOAuth(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/** The provider's options for `origin`; `app` answers /mcp (after the token is checked) and every other path. */
export function oauthOptions(origin: string, app: Handler): OAuthProviderOptions<Cloudflare.Env> {
  const resource = `${origin}/mcp`;
  return {
    apiRoute: "/mcp",
    apiHandler: app,
    defaultHandler: app,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    scopesSupported: [...OAUTH_SCOPES],
    requiredScopes: [...OAUTH_SCOPES],
    accessTokenTTL: ACCESS_TOKEN_TTL_S,
    refreshTokenTTL: REFRESH_TOKEN_TTL_S,
    clientIdMetadataDocumentEnabled: true,
    resourceMetadata: { resource, resource_name: "aptix agent (MCP)", bearer_methods_supported: ["header"] },
    // An aptix API key (anything not shaped as this server's tokens) is checked as one; the app reads it again
    // from its own cache.
    // A key that is known but refused (expired, its user disabled) goes on to the app, which refuses it with its
    // own code; an unknown one is answered here, with the challenge that starts OAuth.
    resolveExternalToken: async ({ token, env }) => {
      const found = await authenticateApiKey(env.DB.withSession("first-primary"), token);
      if (found.ok || found.reason !== "unknown") return { props: null, audience: resource };
      throw new ExternalTokenError("invalid_token", {
        description: "Invalid API key or access token",
        statusCode: 401,
      });
    },
    // A refresh of a grant revoked since (or of a disabled user's) is refused, and the provider drops the grant.
    tokenExchangeCallback: async ({ props, env }) => {
      const grant = GrantProps.safeParse(props);
      if (!grant.success) throw new OAuthError("invalid_grant", { description: "This grant is not aptix's." });
      const check = await checkGrant(env.DB.withSession("first-primary"), grant.data.grantId);
      if (!check.ok) {
        const why = check.reason === "revoked" ? "was revoked" : "is of a disabled user";
        throw new OAuthError("invalid_grant", { description: `This grant ${why}; authorize again.` });
      }
      return undefined;
    },
    onError: ({ code, description, status, internal }) => {
      // The provider's own refusals are the client's to read; only its failures are the operator's.
      if (status >= 500) {
        new JsonAdminLogger({ requestId: "" }).addCustomEvent("Error", "[oauth_error]", description, [
          ["code", code],
          ["reason", internal.reason],
        ]);
      }
    },
  };
}

/** The helpers (parse, consent, complete, grants) of `origin`'s provider, for the app's own routes. */
export function oauthHelpers(origin: string, env: Cloudflare.Env): OAuthHelpers {
  return getOAuthApi(oauthOptions(origin, NO_HANDLER), env);
}

/**
 * Deletes the authorization server's records (KV) of grants aptix revoked: their tokens are refused by aptix's
 * record already; this removes them where the server keeps them. Failures are logged, not thrown.
 */
export async function forgetGrantsInAuthorizationServer(
  env: Cloudflare.Env,
  url: URL,
  org: string,
  user: string,
  kvGrantIds: readonly string[],
): Promise<void> {
  if (!servesOAuth(url) || kvGrantIds.length === 0) return;
  try {
    const oauth = oauthHelpers(url.origin, env);
    for (const kvGrantId of kvGrantIds) await oauth.revokeGrant(kvGrantId, oauthUserId(org, user));
  } catch (error) {
    new JsonAdminLogger({ requestId: "" }).addException("[oauth_forget_grants]", error, [["org", org]]);
  }
}

/**
 * The grants `user` of `org` has given that still stand: aptix's records whose grant the authorization server
 * still has. One it no longer has (replaced by a new consent to the same client, revoked by the client through the
 * token endpoint, ended by a replayed code, or a code never used) is marked revoked here too.
 */
export async function standingGrants(env: Cloudflare.Env, db: Db, url: URL, org: string, user: string) {
  const records = await listGrantRecords(db, org, user);
  if (!servesOAuth(url) || records.length === 0) return records.map(({ kvGrantId: _, ...view }) => view);
  const oauth = oauthHelpers(url.origin, env);
  const known = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await oauth.listUserGrants(oauthUserId(org, user), { cursor, limit: 1000 });
    for (const grant of page.items) known.add(grant.id);
    cursor = page.cursor;
  } while (cursor);
  const gone = records.filter((record) => !known.has(record.kvGrantId));
  for (const record of gone) await revokeGrants(db, org, user, record.id);
  return records.filter((record) => known.has(record.kvGrantId)).map(({ kvGrantId: _, ...view }) => view);
}

/** The helpers never call a handler: the app's routes use them from inside the app. */
const NO_HANDLER: Handler = {
  fetch: () => {
    throw new Error("The OAuth helpers call no handler.");
  },
};

function refusedBeforeOAuth(request: Request, url: URL, env: Cloudflare.Env): boolean {
  try {
    const refusal = hostOrOriginRefusal(request, env);
    return refusal !== null && (refusal.code === "host_not_allowed" || url.pathname === "/mcp");
  } catch {
    // A malformed setting: the app names it.
    return true;
  }
}

/**
 * Access tokens the provider verified, by origin and the token's SHA-256: for AUTH_CACHE_TTL_MS (never past the
 * token's own expiry) an isolate hands a token it knows to /mcp without the provider's KV read and decryption, as it
 * trusts a key it read. aptix's own grant check still runs on every request (revoking a grant ends it at once);
 * a token revoked at the token endpoint (RFC 7009) stops within the same bound as a revoked key.
 */
const verifiedTokens = new ExpiringMap<string, { props: unknown; auth: unknown }>(1_000);

/** The provider's tokens are `userId:grantId:secret`; anything else is an API key (or nothing it knows). */
const ISSUED_TOKEN = /^Bearer[\t ]+([^\s:,]+:[^\s:,]+:[^\s:,]+)$/i;

async function tokenCacheKey(request: Request, url: URL): Promise<string | null> {
  const token = ISSUED_TOKEN.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!token) return null;
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
 * The requests whose context the provider (or this front door, from what the provider verified) filled: only
 * theirs carry props /mcp may trust. Any other context's props (a service binding's, say) are not a grant's.
 */
const checkedContexts = new WeakSet<object>();

export function checkedByOAuth(ctx: object): boolean {
  return checkedContexts.has(ctx);
}

/** A token revoked at the token endpoint (RFC 7009: a `token` and no `grant_type`) is forgotten here at once. */
async function forgetRevokedToken(request: Request, url: URL): Promise<void> {
  if (
    request.method !== "POST" ||
    !request.headers.get("content-type")?.includes("application/x-www-form-urlencoded")
  ) {
    return;
  }
  const form = new URLSearchParams(await request.clone().text());
  const token = form.get("token");
  if (!token || form.has("grant_type")) return;
  const key = await tokenCacheKey(new Request(url, { headers: { authorization: `Bearer ${token}` } }), url);
  if (key) verifiedTokens.delete(key);
}

/**
 * The Worker's front door: the OAuth paths of an origin that can have OAuth go to its provider (which passes
 * /mcp, its token checked, to the app), everything else to the app as it is.
 */
export function withOAuth(app: Handler): Handler {
  const providers = new Map<string, OAuthProvider<Cloudflare.Env>>();
  return {
    fetch: async (request, env, ctx) => {
      const url = new URL(request.url);
      if (!PROVIDER_PATHS.test(url.pathname) || !servesOAuth(url)) return app.fetch(request, env, ctx);
      // A Host not allowed, or a page of an origin not listed on /mcp, is the app's to refuse (a malformed
      // setting too): before the provider answers anything, a preflight included.
      if (refusedBeforeOAuth(request, url, env)) return app.fetch(request, env, ctx);
      let provider = providers.get(url.origin);
      if (!provider) {
        if (providers.size >= 16) providers.clear();
        provider = new OAuthProvider(oauthOptions(url.origin, app));
        providers.set(url.origin, provider);
      }
      if (url.pathname === TOKEN_PATH) await forgetRevokedToken(request, url);
      if (url.pathname !== "/mcp") return provider.fetch(request, env, ctx);
      checkedContexts.add(ctx);
      const now = Date.now();
      const key = await tokenCacheKey(request, url);
      const known = key ? verifiedTokens.get(key, now) : undefined;
      if (known) {
        Reflect.set(ctx, "props", known.props);
        Reflect.set(ctx, "auth", known.auth);
        return inAptixShape(request, await app.fetch(request, env, ctx));
      }
      const response = await provider.fetch(request, env, ctx);
      if (key && response.ok) rememberVerified(key, ctx, now);
      return inAptixShape(request, response);
    },
  };
}

/**
 * /mcp's refusals in aptix's error shape: the provider answers a request without a token with an empty 401, and a
 * token it does not know with OAuth's `{"error": "invalid_token"}`; their challenge (WWW-Authenticate) stays.
 * The OAuth endpoints keep RFC 6749's shape, which OAuth clients read.
 */
async function inAptixShape(request: Request, response: Response): Promise<Response> {
  if (response.status !== 401 && response.status !== 403) return response;
  const text = await response.clone().text();
  const oauthError = z
    .object({ error: z.string(), error_description: z.string().optional() })
    .safeParse(text ? safeJson(text) : {});
  if (text && !oauthError.success) return response;
  const description = oauthError.success ? oauthError.data.error_description : undefined;
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

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
import { errorBody } from "../errors";
import { JsonAdminLogger } from "../observability/admin-logger";
import { isLoopbackHost } from "../settings";
import { authenticateApiKey } from "./api-keys";
import { checkGrant, GrantProps, oauthUserId } from "./oauth-grants";
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
    resolveExternalToken: async ({ token, env }) => {
      const found = await authenticateApiKey(env.DB.withSession("first-primary"), token);
      if (found.ok) return { props: null, audience: resource };
      const description =
        found.reason === "expired"
          ? "This API key has expired; ask an admin of your organization for a new one."
          : found.reason === "user_disabled"
            ? "The user this API key acts for is disabled in your organization."
            : "Invalid API key or access token.";
      throw new ExternalTokenError("invalid_token", { description, statusCode: 401 });
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
 * Deletes the authorization server's records (KV) of grants aptix revoked: their refresh tokens are refused by
 * aptix's record already; this removes them where the server keeps them. Failures are logged, not thrown.
 */
export async function forgetGrantsInAuthorizationServer(
  env: Cloudflare.Env,
  url: URL,
  org: string,
  user: string,
  grantIds: readonly string[],
): Promise<void> {
  if (!servesOAuth(url) || grantIds.length === 0) return;
  try {
    const oauth = oauthHelpers(url.origin, env);
    const userId = oauthUserId(org, user);
    let cursor: string | undefined;
    do {
      const page = await oauth.listUserGrants(userId, { cursor, limit: 100 });
      for (const grant of page.items) {
        const props = z.object({ grantId: z.string() }).safeParse(grant.metadata);
        if (props.success && grantIds.includes(props.data.grantId)) await oauth.revokeGrant(grant.id, userId);
      }
      cursor = page.cursor;
    } while (cursor);
  } catch (error) {
    new JsonAdminLogger({ requestId: "" }).addException("[oauth_forget_grants]", error, [["org", org]]);
  }
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
      const response = await provider.fetch(request, env, ctx);
      return url.pathname === "/mcp" ? inAptixShape(request, response) : response;
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

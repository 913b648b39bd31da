// OAuth 2.1 for /mcp and the A2A door (/a2a), by Cloudflare's @cloudflare/workers-oauth-provider. It covers the
// protocol: the 401 with WWW-Authenticate and resource_metadata, protected resource metadata (RFC 9728, at
// /.well-known/oauth-protected-resource/mcp and /a2a), authorization server metadata (RFC 8414), the token endpoint
// (code with PKCE S256, refresh tokens rotated, revocation per RFC 7009), resource indicators (RFC 8707: a token is
// bound to <origin>/mcp or <origin>/a2a and refused at the other), dynamic client registration (RFC 7591) and Client
// ID Metadata Documents, exact redirect URI matching (http: to loopback only), and its records in KV (OAUTH_KV)
// hashed and encrypted. aptix adds: the authorize step (sign-in and the consent page, src/routes/authorize.ts), PKCE
// for every client (the library lets a confidential client skip it), API keys accepted as bearer tokens on /mcp as
// before, its own record of each grant (src/auth/oauth-grants.ts) checked on every request and at refresh, so
// revoking a grant or disabling its user ends the client's access at once, and errors in aptix's shape on both
// resources (src/auth/mcp-guard.ts). In front of the server: what it reads bounded (src/auth/oauth-bounds.ts;
// registration: src/auth/client-registration.ts), revocation at /oauth/revoke, and a reused refresh token refused,
// ending its grant (src/auth/token-endpoint.ts); a failure it did not expect is logged with its stack and answered
// without it.
//
// The library's combined OAuthProvider protects one resource; its role-based classes (the same code, the same KV
// records) protect several: an OAuthAuthorizationServer per origin (its issuer the origin, its resources /mcp and
// /a2a, /mcp the default for a client that names none), and an OAuthResourceServer per resource whose token check
// asks it. An origin it cannot serve (plain http: off loopback) has no OAuth, and API keys work there as everywhere.
import {
  OAuthAuthorizationServer,
  OAuthError,
  type OAuthHelpers,
  OAuthResourceServer,
  type OAuthResourceTokenValidation,
} from "@cloudflare/workers-oauth-provider";
import { z } from "zod";
import type { Db } from "../db";
import { errorBody } from "../errors";
import { JsonAdminLogger } from "../observability/admin-logger";
import { isLoopbackHost } from "../settings";
import { authenticateApiKey } from "./api-keys";
import { registrationRefusal } from "./client-registration";
import { challengeOf, forgetVerifiedToken, ISSUED_TOKEN, issuedBearer, throughResourceServer } from "./mcp-guard";
import { boundedBody, MAX_OAUTH_BODY_BYTES } from "./oauth-bounds";
import { oauthError } from "./oauth-error";
import { checkGrant, GrantProps, listGrantRecords, oauthUserId, revokeGrants, revokeServerGrant } from "./oauth-grants";
import { hostOrOriginRefusal } from "./origin-guard";
import type { ServerGrant } from "./refresh-token-reuse";
import { REVOKE_PATH, TOKEN_PATH, tokenEndpoint } from "./token-endpoint";

/** The scopes an MCP client may be granted: /mcp needs `chat`. */
export const OAUTH_SCOPES = ["chat"] as const;
/** How long an access token lasts; its refresh token (rotated at each use) lasts 30 days. */
export const ACCESS_TOKEN_TTL_S = 600;
const REFRESH_TOKEN_TTL_S = 30 * 86_400;

export const AUTHORIZE_PATH = "/authorize";
const REGISTER_PATH = "/oauth/register";
const METADATA_PATH = "/.well-known/oauth-authorization-server";

/**
 * The paths the OAuth servers answer (the rest reach the app directly). The metadata, token, revocation and
 * registration endpoints are for MCP clients of any origin (browser-based ones too: they carry no cookie to abuse);
 * /mcp and /a2a check Origin as every route does.
 */
const PROVIDER_PATHS =
  /^\/(mcp|a2a(\/.*)?|oauth\/(token|revoke|register)|\.well-known\/oauth-(authorization-server|protected-resource)(\/.*)?)$/;

type Handler = {
  fetch: (request: Request, env: Cloudflare.Env, ctx: ExecutionContext) => Response | Promise<Response>;
};

/** Whether an origin can have OAuth: https:, or http: on loopback (the provider refuses any other resource). */
export function servesOAuth(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/**
 * The resources an origin's tokens are for (RFC 8707): each token is bound to one of them and accepted there alone.
 * A client that names none is given a token for /mcp, as before A2A had OAuth.
 */
export const OAUTH_RESOURCES = { mcp: "/mcp", a2a: "/a2a" } as const;

/** The authorization server of `origin`: its metadata, token, revocation and registration endpoints, its helpers. */
function newAuthorizationServer(origin: string): OAuthAuthorizationServer<Cloudflare.Env> {
  const mcp = `${origin}${OAUTH_RESOURCES.mcp}`;
  return new OAuthAuthorizationServer<Cloudflare.Env>({
    issuer: origin,
    resources: [mcp, `${origin}${OAUTH_RESOURCES.a2a}`],
    defaultResource: mcp,
    legacyGrantResource: mcp,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    scopesSupported: [...OAUTH_SCOPES],
    accessTokenTTL: ACCESS_TOKEN_TTL_S,
    refreshTokenTTL: REFRESH_TOKEN_TTL_S,
    clientIdMetadataDocumentEnabled: true,
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
    // Registration is bounded (src/auth/client-registration.ts): a refusal names the field.
    clientRegistrationCallback: ({ clientMetadata }) => registrationRefusal(clientMetadata),
    onError: ({ code, description, status, internal }) => {
      // The provider's own refusals are the client's to read; only its failures are the operator's.
      if (status >= 500) {
        new JsonAdminLogger({ requestId: "" }).addCustomEvent("Error", "[oauth_error]", description, [
          ["code", code],
          ["reason", internal.reason],
        ]);
      }
    },
  });
}

/** The authorization servers by origin (one an origin: its issuer is the origin). */
const authorizationServers = new Map<string, OAuthAuthorizationServer<Cloudflare.Env>>();

function authorizationServerOf(origin: string): OAuthAuthorizationServer<Cloudflare.Env> {
  let server = authorizationServers.get(origin);
  if (!server) {
    if (authorizationServers.size >= 16) authorizationServers.clear();
    server = newAuthorizationServer(origin);
    authorizationServers.set(origin, server);
  }
  return server;
}

/**
 * What a bearer presented to a resource of `origin` stands for: a token of this server's shape is the
 * authorization server's to check (its audience must be `resource`); anything else is an aptix API key. A key that
 * is known but refused (expired, its user disabled) goes on to the app, which refuses it with its own code (and
 * reads it again from its own cache); an unknown one is answered here, with the challenge that starts OAuth.
 */
async function validateBearer(
  authorization: OAuthAuthorizationServer<Cloudflare.Env>,
  env: Cloudflare.Env,
  resource: string,
  token: string,
): Promise<OAuthResourceTokenValidation<unknown> | null> {
  if (ISSUED_TOKEN.test(token)) return authorization.validateToken(resource, token, env);
  const found = await authenticateApiKey(env.DB.withSession("first-primary"), token);
  if (found.ok || found.reason !== "unknown") return { props: null, audience: resource };
  throw new OAuthError("invalid_token", { description: "Invalid API key or access token", statusCode: 401 });
}

/** One protected resource of `origin` (RFC 9728 metadata, the challenge, the token check), `app` behind it. */
function newResourceServer(origin: string, path: string, name: string, app: Handler) {
  const authorization = authorizationServerOf(origin);
  return new OAuthResourceServer<Cloudflare.Env, unknown>({
    resourceMetadata: {
      resource: `${origin}${path}`,
      authorization_servers: [origin],
      resource_name: name,
      bearer_methods_supported: ["header"],
    },
    requiredScopes: [...OAUTH_SCOPES],
    validateToken: (env) => (resource, token) => validateBearer(authorization, env, resource, token),
    handler: app,
  });
}

/** The helpers (parse, consent, complete, grants) of `origin`'s authorization server, for the app's own routes. */
export function oauthHelpers(origin: string, env: Cloudflare.Env): OAuthHelpers {
  return authorizationServerOf(origin).getOAuthApi(env);
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

/** Whether `path` is a protected resource's (/mcp, /a2a and what is under /a2a). */
function resourceOfPath(path: string): keyof typeof OAUTH_RESOURCES | null {
  if (path === OAUTH_RESOURCES.mcp) return "mcp";
  if (path === OAUTH_RESOURCES.a2a || path.startsWith(`${OAUTH_RESOURCES.a2a}/`)) return "a2a";
  return null;
}

function refusedBeforeOAuth(request: Request, url: URL, env: Cloudflare.Env): boolean {
  try {
    const refusal = hostOrOriginRefusal(request, env);
    return refusal !== null && (refusal.code === "host_not_allowed" || resourceOfPath(url.pathname) !== null);
  } catch {
    // A malformed setting: the app names it.
    return true;
  }
}

/** Ends a grant whose refresh token was used again: aptix's record at once, then the server's (failures logged). */
async function endServerGrant(env: Cloudflare.Env, url: URL, grant: ServerGrant): Promise<void> {
  await revokeServerGrant(env.DB.withSession("first-primary"), grant.kvGrantId);
  try {
    await oauthHelpers(url.origin, env).revokeGrant(grant.kvGrantId, grant.kvUserId);
  } catch (error) {
    new JsonAdminLogger({ requestId: "" }).addException("[oauth_end_grant]", error, [["kvGrantId", grant.kvGrantId]]);
  }
}

/** The OAuth servers of one origin: its authorization server and its two protected resources. */
interface OriginServers {
  authorization: OAuthAuthorizationServer<Cloudflare.Env>;
  mcp: OAuthResourceServer<Cloudflare.Env, unknown>;
  a2a: OAuthResourceServer<Cloudflare.Env, unknown>;
}

/**
 * What stands in front of the app: the OAuth paths of an origin that can have OAuth go to its authorization server
 * or to the protected resource they are of (which passes the request, its token checked, to the app), everything
 * else to the app as it is. What the server reads is bounded first (src/auth/oauth-bounds.ts); a failure it did not
 * expect is logged with its stack and answered without it.
 */
export function withOAuth(app: Handler): Handler {
  const servers = new Map<string, OriginServers>();
  return {
    fetch: async (request, env, ctx) => {
      const url = new URL(request.url);
      if (!PROVIDER_PATHS.test(url.pathname) || !servesOAuth(url)) return app.fetch(request, env, ctx);
      // A Host not allowed, or a page of an origin not listed on /mcp or /a2a, is the app's to refuse (a malformed
      // setting too): before the provider answers anything, a preflight included.
      if (refusedBeforeOAuth(request, url, env)) return app.fetch(request, env, ctx);
      let found = servers.get(url.origin);
      if (!found) {
        if (servers.size >= 16) servers.clear();
        found = {
          authorization: authorizationServerOf(url.origin),
          mcp: newResourceServer(url.origin, OAUTH_RESOURCES.mcp, "aptix agent (MCP)", app),
          a2a: newResourceServer(url.origin, OAUTH_RESOURCES.a2a, "aptix agent (A2A)", app),
        };
        servers.set(url.origin, found);
      }
      try {
        return await throughProvider(found, { request, url, env, ctx }, app);
      } catch (error) {
        new JsonAdminLogger({ requestId: "" }).addException("[oauth_unexpected]", error, [
          ["method", request.method],
          ["path", url.pathname],
        ]);
        if (resourceOfPath(url.pathname) !== null) {
          return Response.json(errorBody("internal_error", "The server failed to handle this request; try again."), {
            status: 500,
          });
        }
        return oauthError(500, "server_error", "The server failed to handle this request; try again.");
      }
    },
  };
}

interface Call {
  request: Request;
  url: URL;
  env: Cloudflare.Env;
  ctx: ExecutionContext;
}

const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

/** One request through the origin's OAuth servers, with what aptix checks and adds before and after them. */
async function throughProvider(servers: OriginServers, { request, url, env, ctx }: Call, app: Handler) {
  const authorization = (forwarded: Request) => servers.authorization.fetch(forwarded, env, ctx);
  const resource = resourceOfPath(url.pathname);
  if (resource === "mcp") {
    const server = (forwarded: Request) => servers.mcp.fetch(forwarded, env, ctx);
    return throughResourceServer({ request, url, env, ctx, server, app, path: OAUTH_RESOURCES.mcp });
  }
  if (resource === "a2a") {
    // The A2A door takes API keys as it always did (the app checks them); a token of this server's shape is the
    // resource server's to check. A refusal names where OAuth starts.
    const server = (forwarded: Request) => servers.a2a.fetch(forwarded, env, ctx);
    if (issuedBearer(request)) {
      return throughResourceServer({ request, url, env, ctx, server, app, path: OAUTH_RESOURCES.a2a });
    }
    return withChallenge(await app.fetch(request, env, ctx), url, OAUTH_RESOURCES.a2a);
  }
  switch (url.pathname) {
    case TOKEN_PATH:
    case REVOKE_PATH:
      return tokenEndpoint(request, url, {
        server: authorization,
        forgetToken: (token) => forgetVerifiedToken(token, url),
        endGrant: (grant) => endServerGrant(env, url, grant),
        db: env.DB.withSession("first-primary"),
        refreshTokenLifetimeMs: REFRESH_TOKEN_TTL_S * 1000,
      });
    case REGISTER_PATH:
      if (request.method === "POST" && (await boundedBody(request, MAX_OAUTH_BODY_BYTES)) === null) {
        return oauthError(413, "invalid_request", `The registration is larger than ${MAX_OAUTH_BODY_BYTES} bytes.`);
      }
      return authorization(request);
    case METADATA_PATH:
      return request.method === "GET"
        ? withRevocationEndpoint(await authorization(request), url)
        : authorization(request);
    case RESOURCE_METADATA_PATH: {
      // The metadata at the root is /mcp's, as when /mcp was the only resource (clients of then may ask there).
      const mcpMetadata = new URL(`${RESOURCE_METADATA_PATH}${OAUTH_RESOURCES.mcp}`, url);
      return servers.mcp.fetch(new Request(mcpMetadata, request), env, ctx);
    }
    case `${RESOURCE_METADATA_PATH}${OAUTH_RESOURCES.mcp}`:
      return servers.mcp.fetch(request, env, ctx);
    case `${RESOURCE_METADATA_PATH}${OAUTH_RESOURCES.a2a}`:
      return servers.a2a.fetch(request, env, ctx);
    default:
      return app.fetch(request, env, ctx);
  }
}

/** A 401 of the app on `path` names the resource metadata, so an OAuth client knows where to get a token. */
function withChallenge(response: Response, url: URL, path: string): Response {
  if (response.status !== 401 || response.headers.has("www-authenticate")) return response;
  const headers = new Headers(response.headers);
  headers.set("www-authenticate", challengeOf(url, path, OAUTH_SCOPES, false));
  return new Response(response.body, { status: 401, statusText: response.statusText, headers });
}

/**
 * The metadata names /oauth/revoke as the revocation endpoint (the provider names its token endpoint), which
 * authenticates clients as the token endpoint does (RFC 8414's default, client_secret_basic alone, would leave
 * public clients out).
 */
async function withRevocationEndpoint(response: Response, url: URL): Promise<Response> {
  if (response.status !== 200 || !response.headers.get("content-type")?.includes("application/json")) return response;
  const metadata = z.record(z.string(), z.unknown()).parse(await response.json());
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const revocation = {
    revocation_endpoint: `${url.origin}${REVOKE_PATH}`,
    revocation_endpoint_auth_methods_supported: metadata.token_endpoint_auth_methods_supported,
  };
  return new Response(JSON.stringify({ ...metadata, ...revocation }), { status: 200, headers });
}

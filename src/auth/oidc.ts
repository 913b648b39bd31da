// Single sign-on with OpenID Connect, by oauth4webapi (the protocol: discovery, the authorization code flow with
// PKCE S256, state and nonce, the token response and its ID token's iss, aud, azp, exp and nonce) and jose (the ID
// token's signature against the issuer's JWKS); an ID token issued in the future is refused here, and the claims it
// leaves out are read from UserInfo (oidc-userinfo.ts). The flow's secrets (PKCE verifier, nonce) stay in D1 under
// the SHA-256 of its state; the browser holds the state in a short-lived cookie, so a callback from another browser
// (login CSRF) or a second use of it is refused.
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import { z } from "zod";
import type { Db } from "../db";
import { ApiError } from "../errors";
import { ExpiringMap } from "../isolate-cache";
import { quoted } from "../quote";
import { sha256Hex } from "../secret-text";
import type { OidcSettings } from "../settings";
import type { Role } from "../tenancy/roles";
import { clientSecretRedactor } from "./oidc-secret";
import { withUserInfo } from "./oidc-userinfo";

// A sign-in flow's row as its callback takes it (sign_in_flows).
const FlowRow = z.object({
  code_verifier: z.string(),
  nonce: z.string(),
  return_to: z.string(),
  expires_at: z.string(),
});

/** How long a sign-in may take from /auth/login to /auth/callback. */
export const SIGN_IN_FLOW_MS = 10 * 60_000;
/** The cookie that binds a sign-in under way to the browser that began it (Hono's `host` prefix). */
export const SIGN_IN_COOKIE = "aptix_sign_in";
/** How long an isolate keeps a provider's discovery document. */
const DISCOVERY_TTL_MS = 10 * 60_000;
/** How far ahead of this server's clock a provider's may be: an ID token issued later than this is refused. */
export const ID_TOKEN_IAT_SKEW_SECONDS = 60;

interface Provider {
  as: oauth.AuthorizationServer;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}
const providers = new ExpiringMap<string, Provider>(16);

/** http: is allowed on a loopback issuer only (the settings refuse any other). */
function insecureAllowed(issuer: string): { [oauth.allowInsecureRequests]?: true } {
  return new URL(issuer).protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {};
}

/** The provider OIDC_ISSUER names, from its discovery document; a wrong issuer is the operator's to fix. */
export async function identityProvider(config: OidcSettings, now = Date.now()): Promise<Provider> {
  const known = providers.get(config.issuer, now);
  if (known) return known;
  const issuer = new URL(config.issuer);
  let as: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecureAllowed(config.issuer) });
    as = await oauth.processDiscoveryResponse(issuer, response);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ApiError(
      "misconfigured",
      `The server is misconfigured: OIDC_ISSUER ${quoted(config.issuer)} is not an OpenID provider this server can use (its discovery document at ${config.issuer}/.well-known/openid-configuration: ${why}).`,
    );
  }
  if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri) {
    throw new ApiError(
      "misconfigured",
      `The server is misconfigured: OIDC_ISSUER ${quoted(config.issuer)} names no authorization, token or JWKS endpoint in its discovery document.`,
    );
  }
  const provider = { as, jwks: createRemoteJWKSet(new URL(as.jwks_uri)) };
  providers.set(config.issuer, provider, now + DISCOVERY_TTL_MS);
  return provider;
}

/**
 * A local path to go back to after sign-in: absolute on this origin, never another site (`//evil`, `/\evil`, or
 * `/<tab>/evil`, which browsers read as `//evil`); anything else goes to `/`.
 */
export function safeReturnTo(value: string | undefined): string {
  if (!value?.startsWith("/") || value.startsWith("//") || value.includes("\\")) return "/";
  const printable = [...value].every((ch) => ch.charCodeAt(0) > 0x1f && ch.charCodeAt(0) !== 0x7f);
  return printable ? value : "/";
}

/** Begins a sign-in: stores its verifier and nonce, and answers where to send the browser and the state to bind. */
export async function beginSignIn(
  db: Db,
  config: OidcSettings,
  redirectUri: string,
  returnTo: string,
  now = Date.now(),
): Promise<{ authorizationUrl: string; state: string }> {
  const { as } = await identityProvider(config, now);
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set("client_id", config.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", config.scopes);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("nonce", nonce);
  await db.batch([
    db.prepare("DELETE FROM sign_in_flows WHERE expires_at < ?").bind(new Date(now).toISOString()),
    db
      .prepare(
        "INSERT INTO sign_in_flows (state_hash, code_verifier, nonce, return_to, expires_at) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(await sha256Hex(state), codeVerifier, nonce, returnTo, new Date(now + SIGN_IN_FLOW_MS).toISOString()),
  ]);
  return { authorizationUrl: url.href, state };
}

/** The claims of a validated ID token (and those UserInfo adds) that aptix reads. */
export type IdTokenClaims = Record<string, unknown> & { iss: string; sub: string };

/** What a checked token endpoint answer gives a sign-in: the ID token's claims, and the access token for UserInfo. */
export interface CheckedTokens {
  idClaims: IdTokenClaims;
  accessToken: string;
}

/**
 * Checks a token endpoint's answer: oauth4webapi checks the ID token's iss, aud, exp and nonce, and its azp when it
 * names several audiences (then azp must be our client id), but of iat only that it is a number; jose checks its
 * signature against the issuer's JWKS; an iat more than ID_TOKEN_IAT_SKEW_SECONDS ahead is refused here.
 * `skewSeconds` moves this server's idea of now (tests of an expired token, or one from the future).
 */
export async function checkedTokens(
  provider: Provider,
  config: OidcSettings,
  tokenResponse: Response,
  nonce: string,
  skewSeconds = 0,
): Promise<CheckedTokens> {
  const client: oauth.Client = { client_id: config.clientId, [oauth.clockSkew]: skewSeconds };
  let idToken: string;
  let accessToken: string;
  let claims: oauth.IDToken;
  try {
    const result = await oauth.processAuthorizationCodeResponse(provider.as, client, tokenResponse, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    idToken = result.id_token as string;
    accessToken = result.access_token;
    claims = oauth.getValidatedIdTokenClaims(result) as oauth.IDToken;
  } catch (error) {
    throw signInError(error, config);
  }
  try {
    await jwtVerify(idToken, provider.jwks, {
      issuer: provider.as.issuer,
      audience: config.clientId,
      currentDate: new Date(Date.now() + skewSeconds * 1000),
    });
  } catch (error) {
    if (error instanceof joseErrors.JOSEError) {
      throw new ApiError("invalid_id_token", `The identity provider's ID token was refused: ${error.message}.`);
    }
    throw error;
  }
  const now = Math.floor(Date.now() / 1000) + skewSeconds;
  if (claims.iat > now + ID_TOKEN_IAT_SKEW_SECONDS) {
    throw new ApiError(
      "invalid_id_token",
      `The identity provider's ID token was refused: its "iat" (issued at) is ${claims.iat - now} s ahead of this server's clock, more than the ${ID_TOKEN_IAT_SKEW_SECONDS} s clocks may differ by.`,
    );
  }
  return { idClaims: claims as IdTokenClaims, accessToken };
}

/** What a refusal of the provider, or of its answer, tells the person signing in (the client's secret taken out). */
function signInError(error: unknown, config: OidcSettings): unknown {
  const redact = clientSecretRedactor(config);
  if (error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError) {
    const detail = error.error_description ? `: ${error.error_description}` : "";
    const what = error instanceof oauth.ResponseBodyError ? "refused the authorization code" : "did not sign you in";
    return new ApiError("sign_in_failed", redact(`The identity provider ${what} (${error.error}${detail}).`));
  }
  if (error instanceof oauth.OperationProcessingError) {
    const idToken = error.code === oauth.JWT_CLAIM_COMPARISON || error.code === oauth.JWT_TIMESTAMP_CHECK;
    return idToken
      ? new ApiError("invalid_id_token", redact(`The identity provider's ID token was refused: ${error.message}.`))
      : new ApiError("sign_in_failed", redact(`The identity provider's answer was refused: ${error.message}.`));
  }
  return error;
}

/** The person an ID token names, in aptix's terms. */
export interface SignedInPerson {
  org: string;
  id: string;
  email: string | null;
  name: string | null;
  /** By their groups: OIDC_OPERATOR_GROUPS make operators, OIDC_ADMIN_GROUPS admins, anyone else a member. */
  role: Role;
}

function claimText(claims: IdTokenClaims, name: string): string | null {
  const value = claims[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/** The user, org and role the claims give, by the settings' claim names. */
export function personOf(config: OidcSettings, claims: IdTokenClaims): SignedInPerson {
  const id = claimText(claims, config.userClaim);
  if (!id) {
    throw new ApiError(
      "sign_in_failed",
      `The identity provider's ID token and UserInfo have no ${quoted(config.userClaim)} claim to name you by (OIDC_USER_CLAIM).`,
    );
  }
  // An email the provider says it has not verified names nobody: anyone could have typed it.
  if (config.userClaim === "email" && claims.email_verified === false) {
    throw new ApiError(
      "sign_in_failed",
      "The identity provider says your email address is not verified, and aptix names you by it (OIDC_USER_CLAIM); verify it there first.",
    );
  }
  const org = config.org ?? (config.orgClaim ? claimText(claims, config.orgClaim) : null);
  if (!org) {
    throw new ApiError(
      "sign_in_failed",
      `The identity provider's ID token and UserInfo have no ${quoted(config.orgClaim ?? "")} claim to name your organization by (OIDC_ORG_CLAIM).`,
    );
  }
  const rawGroups = claims[config.groupsClaim];
  const groups = Array.isArray(rawGroups) ? rawGroups.filter((g) => typeof g === "string") : [rawGroups];
  return {
    org,
    id,
    email: claimText(claims, "email"),
    name: claimText(claims, "name"),
    role: config.operatorGroups.some((group) => groups.includes(group))
      ? "operator"
      : config.adminGroups.some((group) => groups.includes(group))
        ? "admin"
        : "member",
  };
}

/**
 * Finishes a sign-in at the callback: the state must be the one this browser began with, and its flow unused and
 * on time; then the code is exchanged (with the PKCE verifier), the ID token checked, and UserInfo read for the
 * claims it leaves out.
 */
export async function finishSignIn(
  db: Db,
  config: OidcSettings,
  callbackUrl: URL,
  redirectUri: string,
  browserState: string | undefined,
  now = Date.now(),
): Promise<{ person: SignedInPerson; returnTo: string }> {
  const state = callbackUrl.searchParams.get("state");
  if (!state) {
    throw new ApiError("invalid_sign_in_state", "The sign-in callback has no 'state'; start again at /auth/login.", {
      param: "state",
    });
  }
  if (state !== browserState) {
    throw new ApiError(
      "invalid_sign_in_state",
      "The sign-in callback's 'state' is not the one this browser began with; start again at /auth/login.",
      { param: "state" },
    );
  }
  const row = await db
    .prepare("DELETE FROM sign_in_flows WHERE state_hash = ? RETURNING code_verifier, nonce, return_to, expires_at")
    .bind(await sha256Hex(state))
    .first();
  const flow = row ? FlowRow.parse(row) : null;
  if (!flow) {
    throw new ApiError(
      "invalid_sign_in_state",
      "This sign-in is unknown or already used; start again at /auth/login.",
      { param: "state" },
    );
  }
  if (Date.parse(flow.expires_at) <= now) {
    throw new ApiError(
      "invalid_sign_in_state",
      `This sign-in took longer than ${SIGN_IN_FLOW_MS / 60_000} minutes; start again at /auth/login.`,
      { param: "state" },
    );
  }
  const provider = await identityProvider(config, now);
  const client: oauth.Client = { client_id: config.clientId };
  let params: URLSearchParams;
  let response: Response;
  try {
    params = oauth.validateAuthResponse(provider.as, client, callbackUrl, state);
    response = await oauth.authorizationCodeGrantRequest(
      provider.as,
      client,
      oauth.ClientSecretBasic(config.clientSecret),
      params,
      redirectUri,
      flow.code_verifier,
      insecureAllowed(config.issuer),
    );
  } catch (error) {
    throw signInError(error, config);
  }
  const { idClaims, accessToken } = await checkedTokens(provider, config, response, flow.nonce);
  const claims = await withUserInfo(provider.as, config, accessToken, idClaims, insecureAllowed(config.issuer));
  return { person: personOf(config, claims), returnTo: flow.return_to };
}

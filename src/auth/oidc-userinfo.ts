// The claims a sign-in's ID token leaves out, read from the provider's UserInfo endpoint with its access token
// (oauth4webapi's userInfoRequest and processUserInfoResponse, which refuses an answer about another subject).
import * as oauth from "oauth4webapi";
import { z } from "zod";
import { ApiError } from "../errors";
import { quoted } from "../quote";
import type { OidcSettings } from "../settings";
import { clientSecretRedactor } from "./oidc-secret";

/** A validated ID token's claims (oidc.ts's IdTokenClaims, which imports this file). */
type Claims = Record<string, unknown> & { sub: string };

/** Claims about the token rather than the person: the ID token's stand, and UserInfo never adds them. */
const PROTOCOL_CLAIMS = new Set([
  "iss",
  "sub",
  "aud",
  "exp",
  "iat",
  "nbf",
  "jti",
  "nonce",
  "azp",
  "auth_time",
  "acr",
  "amr",
  "at_hash",
  "c_hash",
  "sid",
]);

/** The claims aptix reads of a person (personOf), by the settings' names. */
function claimsRead(config: OidcSettings): string[] {
  const org = config.orgClaim ? [config.orgClaim] : [];
  return [config.userClaim, ...org, config.groupsClaim, "email", "email_verified", "name"];
}

/**
 * The ID token's claims, with those it lacks of the ones aptix reads filled from UserInfo: asked only when one is
 * missing and the provider names a userinfo_endpoint. The ID token's claims win; UserInfo's `sub` must be its.
 */
export async function withUserInfo<C extends Claims>(
  as: oauth.AuthorizationServer,
  config: OidcSettings,
  accessToken: string,
  idClaims: C,
  options: oauth.UserInfoRequestOptions = {},
): Promise<C> {
  const missing = claimsRead(config).some((name) => !Object.hasOwn(idClaims, name));
  if (!missing || !as.userinfo_endpoint) return idClaims;
  const client: oauth.Client = { client_id: config.clientId };
  let userInfo: oauth.UserInfoResponse;
  try {
    const response = await oauth.userInfoRequest(as, client, accessToken, options);
    userInfo = await oauth.processUserInfoResponse(as, client, idClaims.sub, response);
  } catch (error) {
    throw userInfoError(error, idClaims.sub, clientSecretRedactor(config));
  }
  const added = Object.entries(userInfo).filter(
    ([name]) => !PROTOCOL_CLAIMS.has(name) && !Object.hasOwn(idClaims, name),
  );
  return { ...idClaims, ...Object.fromEntries(added) };
}

/** What processUserInfoResponse keeps of an answer about another subject. */
const OtherSubject = z.object({ body: z.object({ sub: z.string() }) });

/** What a refusal of UserInfo, or of its answer, tells the person signing in (the client's secret taken out). */
function userInfoError(error: unknown, sub: string, redact: (text: string) => string): unknown {
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    const challenge = error.cause[0]?.parameters;
    const detail = challenge?.error_description ? `: ${challenge.error_description}` : "";
    return new ApiError(
      "sign_in_failed",
      redact(
        `The identity provider's UserInfo endpoint refused its own access token (${challenge?.error ?? `HTTP ${error.status}`}${detail}).`,
      ),
    );
  }
  if (error instanceof oauth.OperationProcessingError) {
    const other = error.code === oauth.JSON_ATTRIBUTE_COMPARISON ? OtherSubject.safeParse(error.cause) : null;
    if (other?.success) {
      return new ApiError(
        "sign_in_failed",
        `The identity provider's UserInfo names another person (sub ${quoted(other.data.body.sub)}) than its ID token (sub ${quoted(sub)}); nobody is signed in.`,
      );
    }
    return new ApiError(
      "sign_in_failed",
      redact(`The identity provider's UserInfo answer was refused: ${error.message}.`),
    );
  }
  return error;
}

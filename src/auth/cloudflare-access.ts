// Cloudflare Access in front of the Worker: Access signs each request it lets through with a JWT in the
// Cf-Access-Jwt-Assertion header (RS256, iss the team's domain, aud the application's AUD tag, the person's email).
// jose checks it against the team's keys (<team>/cdn-cgi/access/certs, fetched and kept by createRemoteJWKSet);
// the person is then a user of CF_ACCESS_ORG with the chat scope.
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from "jose";
import { ApiError } from "../errors";
import { keptPerIsolate } from "../isolate-cache";
import type { Principal } from "../principal";

export const ACCESS_HEADER = "Cf-Access-Jwt-Assertion";

const teams = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
keptPerIsolate(() => teams.clear());

function keysOf(teamDomain: string) {
  let keys = teams.get(teamDomain);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(`${teamDomain}/cdn-cgi/access/certs`));
    teams.set(teamDomain, keys);
  }
  return keys;
}

/** The person an Access assertion names; refuses one not signed by the team for this application, or expired. */
export async function principalOfAccess(
  access: { teamDomain: string; aud: string; org: string },
  assertion: string,
  now = new Date(),
): Promise<Principal> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(assertion, keysOf(access.teamDomain), {
      issuer: access.teamDomain,
      audience: access.aud,
      algorithms: ["RS256"],
      currentDate: now,
    }));
  } catch (error) {
    if (!(error instanceof joseErrors.JOSEError)) throw error;
    throw new ApiError(
      "invalid_access_assertion",
      `The ${ACCESS_HEADER} header is not an assertion of this application's Cloudflare Access team: ${error.message}.`,
    );
  }
  const email = typeof payload.email === "string" && payload.email !== "" ? payload.email : null;
  if (!email) {
    throw new ApiError(
      "invalid_access_assertion",
      `The ${ACCESS_HEADER} assertion names no person (no email: a service token); send an API key instead.`,
    );
  }
  return {
    keyId: `user:${email}`,
    credentialId: "access",
    org: access.org,
    user: email,
    scopes: ["chat"],
    via: "cloudflare_access",
  };
}

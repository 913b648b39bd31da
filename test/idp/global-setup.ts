// Vitest global setup (Node): starts two real OpenID providers (test/idp/oidc-idp.ts) on loopback ports and hands
// their issuers to the Workers pool: the one the Worker signs in with, and another with keys of its own (what it
// signs must not pass as the first one's), one whose authorization codes last a second (an expired code), and one
// in the place of a Cloudflare Access team (its keys where Access publishes a team's; its test-control door signs
// assertions of Access's shape with them).
import type { TestProject } from "vitest/node";
import { type IdpClient, startIdp } from "./oidc-idp.ts";

/** The Worker's client at the test provider. */
export const IDP_TEST_CLIENT: IdpClient = {
  client_id: "aptix-test",
  client_secret: "aptix-test-secret",
  redirect_uris: ["http://localhost/auth/callback", "https://aptix.test/auth/callback"],
};

/** Another application at the same provider: its ID tokens name another audience. */
export const IDP_OTHER_CLIENT: IdpClient = {
  client_id: "other-app",
  client_secret: "other-app-secret",
  redirect_uris: ["http://localhost/other/callback"],
};

declare module "vitest" {
  export interface ProvidedContext {
    idpIssuer: string;
    idpOtherIssuer: string;
    idpShortCodeIssuer: string;
    accessTeamIssuer: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const clients = [IDP_TEST_CLIENT, IDP_OTHER_CLIENT];
  const [idp, otherIdp, shortCodeIdp, accessTeam] = await Promise.all([
    startIdp({ clients }),
    startIdp({ clients }),
    startIdp({ clients, authorizationCodeTtlSeconds: 1 }),
    startIdp({ clients: [], jwksPath: "/cdn-cgi/access/certs" }),
  ]);
  project.provide("idpIssuer", idp.issuer);
  project.provide("idpOtherIssuer", otherIdp.issuer);
  project.provide("idpShortCodeIssuer", shortCodeIdp.issuer);
  project.provide("accessTeamIssuer", accessTeam.issuer);
  return async () => {
    await Promise.all([idp.close(), otherIdp.close(), shortCodeIdp.close(), accessTeam.close()]);
  };
}

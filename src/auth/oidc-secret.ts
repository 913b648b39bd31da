// The sign-in client's secret as the identity provider's words may quote it back (src/auth/oidc.ts sends it with
// HTTP Basic): what its errors, shown to the person signing in, have taken out.
import * as oauth from "oauth4webapi";
import { secretRedactor } from "../secret-redaction";
import type { OidcSettings } from "../settings";

/**
 * The credential of the Authorization header the sign-in sends, made by the same client authentication the token
 * request uses (oauth4webapi's own encoding of id and secret, which percent-encodes more than encodeURIComponent).
 */
function basicCredential(config: OidcSettings): string {
  const headers = new Headers();
  void oauth.ClientSecretBasic(config.clientSecret)(
    { issuer: config.issuer },
    { client_id: config.clientId },
    new URLSearchParams(),
    headers,
  );
  return (headers.get("authorization") ?? "").replace(/^Basic /, "");
}

/**
 * Takes the client's secret out of the identity provider's words, as it is and as HTTP Basic sent it: a provider's
 * error may quote what it was sent.
 */
export function clientSecretRedactor(config: OidcSettings): (text: string) => string {
  return secretRedactor({}, [config.clientSecret, basicCredential(config)]);
}

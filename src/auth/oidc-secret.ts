// The sign-in client's secret as the identity provider's words may quote it back (src/auth/oidc.ts sends it with
// HTTP Basic): what its errors, shown to the person signing in, have taken out.
import { secretRedactor } from "../secret-redaction";
import type { OidcSettings } from "../settings";

/**
 * Takes the client's secret out of the identity provider's words, as it is and as HTTP Basic sends it (the form
 * encoding of id and secret, joined and base64-encoded): a provider's error may quote what it was sent.
 */
export function clientSecretRedactor(config: OidcSettings): (text: string) => string {
  const form = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
  // Both parts percent-encoded first: ASCII, which btoa takes.
  const basic = (encode: (value: string) => string) =>
    btoa(`${encode(config.clientId)}:${encode(config.clientSecret)}`);
  return secretRedactor({}, [config.clientSecret, basic(form), basic(encodeURIComponent)]);
}

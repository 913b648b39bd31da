// Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` and base64 of random bytes, and
// each POST carries `webhook-id` (the delivery's, the same on every retry: receivers dedupe by it),
// `webhook-timestamp` (this attempt's, in seconds: receivers refuse an old one) and `webhook-signature`
// (`v1,` and base64 of HMAC-SHA256 over "id.timestamp.body"), signed by the `standardwebhooks` library receivers
// verify with.
import { Webhook } from "standardwebhooks";

/** Bytes of a new signing secret (Standard Webhooks asks for 24 to 64). */
const SECRET_BYTES = 32;

/** A new signing secret, `whsec_<base64>`. */
export function newSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(SECRET_BYTES));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** The three headers of one attempt of delivery `id` with `body`, signed with `secret` at `at`. */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

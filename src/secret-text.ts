// Secrets as text: random tokens (API keys, browser sessions, socket tickets) and the SHA-256 under which a secret
// is stored or looked up, never the secret itself.

/** `bytes` random bytes as base64url (no padding), after `prefix`. */
export function randomToken(prefix = "", bytes = 32): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return `${prefix}${btoa(String.fromCharCode(...raw))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "")}`;
}

/** Each byte's two lowercase hex digits (a key is hashed on every authenticated request). */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
const encoder = new TextEncoder();

/** The SHA-256 of `text` as 64 lowercase hex digits. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  let hex = "";
  for (const byte of digest) hex += HEX[byte];
  return hex;
}

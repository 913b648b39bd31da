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

/** The SHA-256 of `text` as 64 lowercase hex digits. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// The one redaction of secrets from text that came from outside (an upstream's error body or stream, a tool result
// on a span) before it reaches a client, a log line or a trace: every secret the Worker knows (its secret bindings:
// the LLM key, route and MCP keys, the collector's headers, the sign-in client's secret, the key that wraps orgs'
// keys), the org secrets in play (a route's key an org stored), and aptix's own key and token formats. A relayed
// stream is scrubbed of the keys it was sent with as it passes, a secret cut across two chunks included.
import { keptPerIsolate } from "./isolate-cache";
import { SettingsVars } from "./settings";

const REDACTED = "[redacted]";
/** Shorter values are not secrets worth the false matches (a var set to "on"). */
const MIN_SECRET_CHARS = 6;

/** Settings that are secrets although the settings schema names them. */
const SECRET_SETTINGS = new Set([
  "LLM_API_KEY",
  "OIDC_CLIENT_SECRET",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "SECRETS_KEY",
  "SECRETS_KEY_PREVIOUS",
]);
const PUBLIC_SETTINGS = new Set(Object.keys(SettingsVars.shape).filter((name) => !SECRET_SETTINGS.has(name)));

/** aptix's own credentials by their formats: API keys (`ak_…`), WebSocket tickets (`wst_…`), webhook secrets (`whsec_…`). */
const OWN_TOKENS = /\b(?:ak|wst)_[A-Za-z0-9_-]{8,}|\bwhsec_[A-Za-z0-9+/=]{8,}/g;

/** The values of `env` that are secrets: each string binding that is not a public setting, and the collector headers' values. */
function envSecrets(env: object): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string" || PUBLIC_SETTINGS.has(name)) continue;
    secrets.push(value);
    if (name === "OTEL_EXPORTER_OTLP_HEADERS") {
      for (const pair of value.split(",")) {
        const raw = pair.slice(pair.indexOf("=") + 1).trim();
        let decoded = raw;
        try {
          decoded = decodeURIComponent(raw);
        } catch {
          // Not percent-encoded: the raw value is the value.
        }
        // The header's value, and its credential without the scheme (`Bearer <token>`: the token alone too).
        const credential = decoded.includes(" ") ? decoded.slice(decoded.indexOf(" ") + 1).trim() : decoded;
        secrets.push(raw, decoded, credential);
      }
    }
  }
  return secrets;
}

/**
 * The secrets as they may appear in text: as they are, escaped inside JSON (as JSON.stringify does, and with `/` as
 * `\/`, as other encoders do), and percent-encoded in a URL; longest first, so one is taken out whole. A key of
 * letters, digits, `-` and `_` (most are) is spelled one way in all of them.
 */
function spellings(values: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_SECRET_CHARS) continue;
    const json = JSON.stringify(value).slice(1, -1);
    out.add(value);
    out.add(json);
    out.add(json.replaceAll("/", "\\/"));
    out.add(encodeURIComponent(value));
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** `error` with its message and stack redacted by `redact` (its name kept), for a log line. */
export function redactedError(error: unknown, redact: (text: string) => string): Error {
  if (!(error instanceof Error)) return new Error(redact(String(error)));
  const copy = new Error(redact(error.message));
  copy.name = error.name;
  copy.stack = error.stack === undefined ? undefined : redact(error.stack);
  return copy;
}

/** Takes every secret of `env`, and each of `more` (org secrets in play), out of a text. */
export function secretRedactor(env: object, more: Iterable<string> = []): (text: string) => string {
  const secrets = spellings([...envSecrets(env), ...more]);
  return (text) => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    return out.replace(OWN_TOKENS, REDACTED);
  };
}

/** Takes `keys` out of a text (a model client's own key from its upstream's words). */
export function redactKeys(text: string, keys: Iterable<string>): string {
  let out = text;
  for (const key of spellings(keys)) if (out.includes(key)) out = out.replaceAll(key, REDACTED);
  return out;
}

const encoder = new TextEncoder();

// The keys' spellings as bytes, by the keys (a route's keys are the same on every call: not encoded again on each).
const encodedKeys = new Map<string, Uint8Array[]>();
keptPerIsolate(() => encodedKeys.clear());

function encoded(keys: readonly string[]): Uint8Array[] {
  const id = keys.join("\u0000");
  let found = encodedKeys.get(id);
  if (!found) {
    found = spellings(keys).map((key) => encoder.encode(key));
    if (encodedKeys.size >= 64) encodedKeys.clear();
    encodedKeys.set(id, found);
  }
  return found;
}

/** Where `needle` starts in `haystack` at or after `from`, or -1. */
function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0];
  const last = haystack.length - needle.length;
  for (
    let i = haystack.indexOf(first as number, from);
    i !== -1 && i <= last;
    i = haystack.indexOf(first as number, i + 1)
  ) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}

const REDACTED_BYTES = encoder.encode(REDACTED);

/** `bytes` with every spelling in `keys` replaced; `bytes` itself when none is in it. */
function replaceKeyBytes(bytes: Uint8Array, keys: readonly Uint8Array[]): Uint8Array {
  let out = bytes;
  for (const key of keys) {
    let at = indexOfBytes(out, key, 0);
    if (at === -1) continue;
    const parts: Uint8Array[] = [];
    let from = 0;
    while (at !== -1) {
      parts.push(out.subarray(from, at), REDACTED_BYTES);
      from = at + key.length;
      at = indexOfBytes(out, key, from);
    }
    parts.push(out.subarray(from));
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      joined.set(part, offset);
      offset += part.length;
    }
    out = joined;
  }
  return out;
}

/** A whole answer's bytes without `keys` (any spelling); the same bytes when it has none. */
export function scrubWhole(bytes: ArrayBuffer, keys: readonly string[]): ArrayBuffer | Uint8Array {
  if (keys.length === 0) return bytes;
  const view = new Uint8Array(bytes);
  const clean = replaceKeyBytes(view, encoded(keys));
  return clean === view ? bytes : clean;
}

/**
 * Scrubs keys out of a relayed byte stream: each chunk goes out at once with every whole key replaced, but for a
 * tail that could be the start of a key (held until the next chunk tells, so a key cut across two chunks is found).
 * Without keys, chunks pass untouched.
 */
export class StreamScrubber {
  private readonly keys: Uint8Array[];
  private held: Uint8Array | null = null;

  constructor(keys: readonly string[]) {
    this.keys = keys.length === 0 ? [] : encoded(keys);
  }

  /** The bytes to send now for `chunk` (null: none yet). */
  push(chunk: Uint8Array): Uint8Array | null {
    if (this.keys.length === 0) return chunk;
    let bytes = chunk;
    if (this.held) {
      bytes = new Uint8Array(this.held.length + chunk.length);
      bytes.set(this.held);
      bytes.set(chunk, this.held.length);
      this.held = null;
    }
    const clean = replaceKeyBytes(bytes, this.keys);
    const keep = this.keyStartAtEnd(clean);
    if (keep > 0) {
      this.held = clean.slice(clean.length - keep);
      return clean.length === keep ? null : clean.subarray(0, clean.length - keep);
    }
    return clean;
  }

  /** What is still held, at the stream's end (a key's start that no key followed). */
  flush(): Uint8Array | null {
    const rest = this.held;
    this.held = null;
    return rest;
  }

  /** The length of the longest tail of `bytes` that is a key's start (not a whole key: those are replaced). */
  private keyStartAtEnd(bytes: Uint8Array): number {
    let longest = 0;
    for (const key of this.keys) {
      const first = key[0] as number;
      // Only a tail that begins with the key's first byte can be its start: those are the places to try, longest first.
      let at = bytes.indexOf(first, Math.max(0, bytes.length - key.length + 1));
      for (; at !== -1 && bytes.length - at > longest; at = bytes.indexOf(first, at + 1)) {
        let i = 1;
        while (at + i < bytes.length && bytes[at + i] === key[i]) i++;
        if (at + i === bytes.length) {
          longest = bytes.length - at;
          break;
        }
      }
    }
    return longest;
  }
}

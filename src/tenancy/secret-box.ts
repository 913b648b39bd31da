// Envelope encryption of an org's provider keys, with WebCrypto: each value is sealed with a data key of its own
// (AES-256-GCM, a fresh 96-bit IV, its org and name as additional data, so a row copied to another org or name does
// not open), and the data key is wrapped the same way by a key derived (HKDF-SHA-256) from the Worker secret
// SECRETS_KEY. A row names the wrapping key by an id (a hash, never the key): after a rotation, rows still wrapped by
// SECRETS_KEY_PREVIOUS open with it until they are wrapped again (rewrap).
import { sha256Hex } from "../secret-text";

/** A sealed value as it is stored: base64 of IV and ciphertext, and which key wrapped its data key. */
export interface SealedSecret {
  valueCiphertext: string;
  wrappedKey: string;
  keyId: string;
}

/** The key SECRETS_KEY (or SECRETS_KEY_PREVIOUS) derives, and its id. */
interface WrappingKey {
  id: string;
  key: CryptoKey;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const IV_BYTES = 12;

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));

/** Why a sealed secret cannot be opened: its wrapping key is not configured, or it does not open (tampered). */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretBoxError";
  }
}

// Derived once per secret string in an isolate (a derivation is cheap, but not free on every model call).
const derived = new Map<string, Promise<WrappingKey>>();

function wrappingKey(secret: string): Promise<WrappingKey> {
  let found = derived.get(secret);
  if (!found) {
    found = (async () => {
      const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
      const key = await crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: encoder.encode("aptix org secrets"), info: encoder.encode("wrap v1") },
        material,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
      return { id: (await sha256Hex(`aptix secrets key id\n${secret}`)).slice(0, 16), key };
    })();
    if (derived.size >= 8) derived.clear();
    derived.set(secret, found);
  }
  return found;
}

/** What a sealed value is bound to: its org and name (a row moved elsewhere does not open). */
const bound = (org: string, name: string) => encoder.encode(`${org}\n${name}`);

async function encrypt(key: CryptoKey, plain: Uint8Array, additionalData: Uint8Array): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, key, plain));
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return toBase64(out);
}

async function decrypt(key: CryptoKey, text: string, additionalData: Uint8Array): Promise<Uint8Array> {
  const bytes = fromBase64(text);
  const iv = bytes.slice(0, IV_BYTES);
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, key, bytes.slice(IV_BYTES)),
    );
  } catch {
    throw new SecretBoxError("A stored secret does not open: it was changed, or moved to another org or name.");
  }
}

export class SecretBox {
  private constructor(
    private readonly current: WrappingKey,
    private readonly previous: WrappingKey | null,
  ) {}

  /** The box of SECRETS_KEY (and SECRETS_KEY_PREVIOUS during a rotation). */
  static async of(keys: { key: string; previousKey: string | null }): Promise<SecretBox> {
    const [current, previous] = await Promise.all([
      wrappingKey(keys.key),
      keys.previousKey ? wrappingKey(keys.previousKey) : Promise.resolve(null),
    ]);
    return new SecretBox(current, previous);
  }

  /** The id of the key new rows are wrapped by. */
  get keyId(): string {
    return this.current.id;
  }

  /** `value` sealed for `org`'s secret `name`, under a new data key wrapped by SECRETS_KEY. */
  async seal(org: string, name: string, value: string): Promise<SealedSecret> {
    const dataKeyBytes = crypto.getRandomValues(new Uint8Array(32));
    const dataKey = await crypto.subtle.importKey("raw", dataKeyBytes, "AES-GCM", false, ["encrypt"]);
    const ad = bound(org, name);
    const [valueCiphertext, wrappedKey] = await Promise.all([
      encrypt(dataKey, encoder.encode(value), ad),
      encrypt(this.current.key, dataKeyBytes, ad),
    ]);
    return { valueCiphertext, wrappedKey, keyId: this.current.id };
  }

  /** The value of a sealed secret of `org` named `name`. */
  async open(org: string, name: string, sealed: SealedSecret): Promise<string> {
    const ad = bound(org, name);
    const dataKeyBytes = await decrypt(this.wrapperOf(sealed.keyId).key, sealed.wrappedKey, ad);
    const dataKey = await crypto.subtle.importKey("raw", dataKeyBytes, "AES-GCM", false, ["decrypt"]);
    return decoder.decode(await decrypt(dataKey, sealed.valueCiphertext, ad));
  }

  /** The data key wrapped again by SECRETS_KEY (the value's ciphertext is unchanged); null when it already is. */
  async rewrap(
    org: string,
    name: string,
    sealed: SealedSecret,
  ): Promise<Pick<SealedSecret, "wrappedKey" | "keyId"> | null> {
    if (sealed.keyId === this.current.id) return null;
    const ad = bound(org, name);
    const dataKeyBytes = await decrypt(this.wrapperOf(sealed.keyId).key, sealed.wrappedKey, ad);
    return { wrappedKey: await encrypt(this.current.key, dataKeyBytes, ad), keyId: this.current.id };
  }

  private wrapperOf(keyId: string): WrappingKey {
    if (keyId === this.current.id) return this.current;
    if (keyId === this.previous?.id) return this.previous;
    throw new SecretBoxError(
      "A stored secret was wrapped by a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS; set the key it was stored under as SECRETS_KEY_PREVIOUS.",
    );
  }
}

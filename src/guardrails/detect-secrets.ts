// The `secrets` guardrail's detectors: the published formats of the common providers' API keys and tokens, PEM
// private keys, JWTs, and aptix's own API keys and socket tickets (src/secret-redaction.ts names the same formats
// for error text). Each format is a prefix the provider documents followed by enough random characters that a
// word of prose does not match.
import type { SecretProvider } from "./guardrail-config";
import { type Span, spansOf } from "./guardrail-span";

const FORMATS: Record<SecretProvider, RegExp> = {
  // Project, service-account and admin keys (`sk-proj-`, `sk-svcacct-`, `sk-admin-`) and the older `sk-...`.
  openai: /(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  anthropic: /(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}/g,
  // Access key ids: long-lived (AKIA) and temporary (ASIA).
  aws: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
  github: /(?<![\w-])(?:(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/g,
  gitlab: /(?<![\w-])glpat-[A-Za-z0-9_-]{20,}/g,
  slack: /(?<![\w-])xox[abpr]-[A-Za-z0-9-]{10,}/g,
  stripe: /(?<![\w-])(?:sk|rk)_live_[A-Za-z0-9]{16,}/g,
  google: /(?<![\w-])AIza[0-9A-Za-z_-]{35}/g,
  // A whole PEM block; one cut before its END line is taken to the end of the text.
  private_key:
    /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|[\s\S]*$)/g,
  // Three base64url parts, the first two JSON objects (`{"` is `eyJ`).
  jwt: /(?<![\w-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g,
  // aptix API keys (`ak_` and 43 base64url characters) and WebSocket tickets (`wst_...`).
  aptix: /(?<![\w-])(?:ak|wst)_[A-Za-z0-9_-]{16,}/g,
};

/**
 * A piece of text each format cannot match without: a text without any is not searched (a substring test costs a
 * fraction of a regex's walk over the text, and most texts hold no secret at all).
 */
const HINTS: Record<SecretProvider, readonly string[]> = {
  openai: ["sk-"],
  anthropic: ["sk-ant-"],
  aws: ["AKIA", "ASIA"],
  github: ["gh", "github_pat_"],
  gitlab: ["glpat-"],
  slack: ["xox"],
  stripe: ["_live_"],
  google: ["AIza"],
  private_key: ["PRIVATE KEY-----"],
  jwt: ["eyJ"],
  aptix: ["ak_", "wst_"],
};

/** The secrets in `text` of the providers asked for (overlaps not yet settled). */
export function detectSecrets(text: string, providers: readonly SecretProvider[]): Span[] {
  return providers.flatMap((provider) =>
    HINTS[provider].some((hint) => text.includes(hint)) ? spansOf(text, FORMATS[provider], provider) : [],
  );
}

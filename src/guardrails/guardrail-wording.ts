// What a person reads when a guardrail blocks: which guardrail, where, and what it found, in plain words (never the
// text it matched). One module, so the turn, the passthrough and the console say it alike.
import type { GuardrailKind, GuardrailPoint } from "./guardrail-config";

const SUBJECT: Record<GuardrailPoint, string> = {
  input: "your message",
  output: "the answer",
  tool_call: "the tool call's arguments",
  tool_result: "the tool's result",
};

/** Each thing a guardrail can find, in words. */
const FOUND_WORDS: Readonly<Record<string, string>> = {
  email: "an email address",
  phone: "a phone number",
  card: "a card number",
  iban: "a bank account number (IBAN)",
  national_id: "a national id number",
  ip: "an IP address",
  openai: "an OpenAI API key",
  anthropic: "an Anthropic API key",
  aws: "an AWS access key",
  github: "a GitHub token",
  gitlab: "a GitLab token",
  slack: "a Slack token",
  stripe: "a Stripe secret key",
  google: "a Google API key",
  private_key: "a private key",
  jwt: "a JSON Web Token",
  aptix: "an aptix API key",
  S1: "violent crimes",
  S2: "non-violent crimes",
  S3: "sex-related crimes",
  S4: "child sexual exploitation",
  S5: "defamation",
  S6: "specialized advice",
  S7: "privacy",
  S8: "intellectual property",
  S9: "indiscriminate weapons",
  S10: "hate",
  S11: "suicide and self-harm",
  S12: "sexual content",
  S13: "elections",
  S14: "code interpreter abuse",
  ignore_instructions: "asks to ignore instructions",
  role_change: "asks the assistant to take another role",
  prompt_exfiltration: "asks for the system prompt",
  role_tags: "hidden role markers",
  hidden_instructions: "hidden instructions",
  injection: "instructions aimed at the assistant",
};

function list(found: readonly string[]): string {
  return found.map((f) => FOUND_WORDS[f] ?? f).join(", ");
}

function what(kind: GuardrailKind, found: readonly string[]): string {
  switch (kind) {
    case "pii":
      return `contains personal data (${list(found)})`;
    case "secrets":
      return `contains a secret (${list(found)})`;
    case "moderation":
      return found.length > 0 && found[0] !== "moderation"
        ? `was flagged as harmful content (${list(found)})`
        : "was flagged as harmful content";
    case "prompt_injection":
      return found.length > 0 && found[0] !== "prompt_injection"
        ? `looks like an attempt to instruct the assistant (${list(found)})`
        : "looks like an attempt to instruct the assistant";
    case "deny":
      return "contains a word or phrase that is not allowed here";
    case "max_tokens":
      return "is longer than this guardrail allows";
  }
}

/** `Blocked by the guardrail "pii": your message contains personal data (an email address).` */
export function blockedMessage(decision: {
  guardrail: string;
  kind: GuardrailKind;
  point: GuardrailPoint;
  found: readonly string[];
}): string {
  return `Blocked by the guardrail "${decision.guardrail}": ${SUBJECT[decision.point]} ${what(decision.kind, decision.found)}.`;
}

// The secrets guardrail's formats (src/guardrails/detect-secrets.ts): each provider's keys, and prose left alone.
import { describe, expect, it } from "vitest";
import { detectSecrets } from "../../src/guardrails/detect-secrets";
import { SECRET_PROVIDERS } from "../../src/guardrails/guardrail-config";
import { settleSpans } from "../../src/guardrails/guardrail-span";

const SAMPLES: Record<(typeof SECRET_PROVIDERS)[number], string> = {
  openai: "sk-proj-Abcdefghijklmnopqrstuvwx0123456789",
  anthropic: "sk-ant-api03-Abcdefghijklmnopqrstuvwx0123456789",
  aws: "AKIAIOSFODNN7EXAMPLE",
  github: "ghp_Abcdefghijklmnopqrstuvwxyz0123456789",
  gitlab: "glpat-Abcdefghij0123456789",
  slack: "xoxb-1234567890-abcdefghij",
  stripe: "sk_live_Abcdefghij0123456789",
  google: "AIzaSyA-1234567890abcdefghijklmnopqrstu",
  private_key: "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  aptix: "ak_Q2hhbmdlTWVQbGVhc2UxMjM0NTY3ODkwYWJjZGVm",
};

describe("secrets", () => {
  for (const provider of SECRET_PROVIDERS) {
    it(`finds ${provider}'s format whole, as ${provider}`, () => {
      const text = `the key is ${SAMPLES[provider]} ok`;
      const spans = settleSpans(detectSecrets(text, SECRET_PROVIDERS));
      expect(spans.map((s) => [s.type, text.slice(s.start, s.end)])).toEqual([[provider, SAMPLES[provider]]]);
    });
  }

  it("leaves prose that shares a prefix (sk-learn, task_list, a short ak_ name)", () => {
    expect(detectSecrets("use sk-learn and task_list; ak_short; AKIA in caps", SECRET_PROVIDERS)).toEqual([]);
  });

  it("finds only the providers asked for", () => {
    const text = `${SAMPLES.openai} ${SAMPLES.aws}`;
    expect(detectSecrets(text, ["aws"]).map((s) => s.type)).toEqual(["aws"]);
  });
});

// The detectors of the pii, secrets and deny guardrails (src/guardrails/detect-*.ts): each finds what it should and
// leaves its look-alikes (a Luhn-failing card, an invalid IBAN, a date that looks like a phone, prose sharing a prefix).
import { describe, expect, it } from "vitest";
import { DENY_WINDOW_CHARS, detectDenied } from "../../src/guardrails/detect-deny";
import { detectPii } from "../../src/guardrails/detect-pii";
import { detectSecrets } from "../../src/guardrails/detect-secrets";
import type { PiiEntity } from "../../src/guardrails/guardrail-config";
import { SECRET_PROVIDERS } from "../../src/guardrails/guardrail-config";
import { settleSpans } from "../../src/guardrails/guardrail-span";

/** The texts `entity` finds in `text`, settled. */
function found(entity: PiiEntity, text: string): string[] {
  return settleSpans(detectPii(text, [entity])).map((span) => text.slice(span.start, span.end));
}

describe("pii: email", () => {
  it("finds an email address inside a sentence", () => {
    expect(found("email", "Write to ada.lovelace+notes@example.co.uk, thanks.")).toEqual([
      "ada.lovelace+notes@example.co.uk",
    ]);
  });

  it("leaves a handle and a bare domain", () => {
    expect(found("email", "ping @ada on example.com")).toEqual([]);
  });
});

describe("pii: phone", () => {
  it("finds international and common national shapes", () => {
    const text = "Call +44 20 7946 0958, (555) 123-4567, 555-123-4567, 06 12 34 56 78 or +14155550123.";
    expect(found("phone", text)).toEqual([
      "+44 20 7946 0958",
      "(555) 123-4567",
      "555-123-4567",
      "06 12 34 56 78",
      "+14155550123",
    ]);
  });

  it("leaves dates, plain runs of digits, short numbers and IP addresses", () => {
    expect(found("phone", "On 2024-01-15 or 15.01.2024, order 12345678, room 12 34, host 192.168.10.20")).toEqual([]);
  });
});

describe("pii: card", () => {
  it("finds a Luhn-valid card number with spaces or dashes", () => {
    expect(found("card", "Card 4111 1111 1111 1111 and 5500-0000-0000-0004.")).toEqual([
      "4111 1111 1111 1111",
      "5500-0000-0000-0004",
    ]);
  });

  it("leaves a number failing the Luhn check", () => {
    expect(found("card", "Card 4111 1111 1111 1112")).toEqual([]);
  });
});

describe("pii: iban", () => {
  it("finds a valid IBAN compact or in groups, not the word after it", () => {
    expect(found("iban", "Pay DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432 TODAY")).toEqual([
      "DE89 3704 0044 0532 0130 00",
      "GB82WEST12345698765432",
    ]);
  });

  it("leaves an IBAN whose check digits are wrong", () => {
    expect(found("iban", "Pay DE88 3704 0044 0532 0130 00")).toEqual([]);
  });
});

describe("pii: national_id", () => {
  it("finds a US SSN, a UK NINO, a Spanish DNI and an Italian codice fiscale", () => {
    const text = "SSN 123-45-6789, NINO AB 12 34 56 C, DNI 12345678Z, CF RSSMRA85T10A562S.";
    expect(found("national_id", text)).toEqual(["123-45-6789", "AB 12 34 56 C", "12345678Z", "RSSMRA85T10A562S"]);
  });

  it("leaves SSNs of the never-issued ranges and a DNI with the wrong letter", () => {
    expect(found("national_id", "000-12-3456 666-12-3456 912-34-5678 123-00-4567 123-45-0000 12345678A")).toEqual([]);
  });
});

describe("pii: ip", () => {
  it("finds IPv4 and IPv6 addresses", () => {
    expect(found("ip", "From 203.0.113.7 and 2001:db8::8a2e:370:7334 and fe80:0:0:0:0:0:0:1.")).toEqual([
      "203.0.113.7",
      "2001:db8::8a2e:370:7334",
      "fe80:0:0:0:0:0:0:1",
    ]);
  });

  it("leaves out-of-range octets, version strings and clock times", () => {
    expect(found("ip", "256.1.1.1 v1.2.3.4.5 at 12:30:45")).toEqual([]);
  });
});

describe("pii: several entities", () => {
  it("takes a card as a card, not as a phone number", () => {
    const text = "4111 1111 1111 1111";
    expect(settleSpans(detectPii(text, ["phone", "card"])).map((s) => s.type)).toEqual(["card"]);
  });
});

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

function denied(text: string, spec: { words?: string[]; patterns?: string[] }): string[] {
  return detectDenied(text, spec).map((span) => text.slice(span.start, span.end));
}

describe("deny", () => {
  it("finds a listed word whole and in any case, not inside another word", () => {
    expect(denied("Project Falcon is not falconry; FALCON again.", { words: ["falcon"] })).toEqual([
      "Falcon",
      "FALCON",
    ]);
  });

  it("finds a phrase across any spacing", () => {
    expect(denied("the  secret\nplan", { words: ["secret plan"] })).toEqual(["secret\nplan"]);
  });

  it("reads whole words of other scripts (no letter either side)", () => {
    expect(denied("Проект Сокол и соколиный", { words: ["сокол"] })).toEqual(["Сокол"]);
  });

  it("finds a regex's matches, case-insensitive", () => {
    expect(denied("ticket INC-1234 and inc-99", { patterns: ["inc-\\d{3,}"] })).toEqual(["INC-1234"]);
  });

  it("finds a match beyond the first window of a long text", () => {
    const text = `${"a ".repeat(DENY_WINDOW_CHARS)}codename zebra`;
    expect(denied(text, { patterns: ["codename \\w+"] })).toEqual(["codename zebra"]);
  });
});

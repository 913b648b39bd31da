// An admin's guardrail list (src/guardrails/guardrail-config.ts): defaults, and a 400 naming the entry and field.
import { describe, expect, it } from "vitest";
import { parseGuardrails } from "../../src/guardrails/guardrail-config";

/** The refusal of a list, as code, param and message. */
function refusalOf(value: unknown) {
  const outcome = parseGuardrails(value, "guardrails");
  if (outcome.ok) throw new Error("expected a refusal");
  return { code: outcome.code, param: outcome.param, message: outcome.message };
}

describe("parseGuardrails", () => {
  it("names unnamed entries after their kind, then kind_2, around names given", () => {
    const outcome = parseGuardrails(
      [
        { kind: "pii", points: ["input"], action: "mask" },
        { name: "pii", kind: "deny", points: ["output"], action: "block", words: ["x"] },
        { kind: "pii", points: ["output"], action: "redact", entities: ["email"] },
      ],
      "guardrails",
    );
    expect(outcome.ok && outcome.value.map((g) => g.name)).toEqual(["pii_2", "pii", "pii_3"]);
  });

  it("refuses an unknown kind, naming guardrails[0].kind", () => {
    expect(refusalOf([{ kind: "toxicity", points: ["input"], action: "block" }])).toMatchObject({
      code: "invalid_guardrail",
      param: "guardrails[0].kind",
    });
  });

  it("refuses an unknown field, naming it", () => {
    expect(refusalOf([{ kind: "pii", points: ["input"], action: "flag", level: 3 }]).param).toBe("guardrails[0].level");
  });

  it("refuses a bad regex, naming its index and saying why", () => {
    const list = [
      { kind: "pii", points: ["input"], action: "flag" },
      { kind: "deny", points: ["input"], action: "block", patterns: ["ok", "fine", "(unclosed"] },
    ];
    const refusal = refusalOf(list);
    expect(refusal.param).toBe("guardrails[1].patterns[2]");
    expect(refusal.message).toContain("not a valid regular expression");
  });

  it("refuses a regex that repeats a repeating group", () => {
    expect(refusalOf([{ kind: "deny", points: ["input"], action: "block", patterns: ["(a+)+$"] }]).param).toBe(
      "guardrails[0].patterns[0]",
    );
  });

  it("refuses an option on the wrong kind, naming the option", () => {
    const refusal = refusalOf([{ kind: "pii", points: ["input"], action: "block", words: ["x"] }]);
    expect(refusal.param).toBe("guardrails[0].words");
    expect(refusal.message).toContain("deny");
  });

  it("refuses mask on output, naming the point", () => {
    const refusal = refusalOf([{ kind: "pii", points: ["input", "output"], action: "mask" }]);
    expect(refusal.param).toBe("guardrails[0].points[1]");
    expect(refusal.message).toContain("mask hides a value from the model: points input and tool_result");
  });

  it("refuses redact on a kind that finds no text to replace", () => {
    expect(refusalOf([{ kind: "moderation", points: ["input"], action: "redact" }]).param).toBe("guardrails[0].action");
  });

  it("refuses max_tokens without its limit", () => {
    expect(refusalOf([{ kind: "max_tokens", points: ["input"], action: "block" }]).param).toBe(
      "guardrails[0].maxTokens",
    );
  });

  it("refuses a point named twice, and a name used twice", () => {
    expect(refusalOf([{ kind: "pii", points: ["input", "input"], action: "flag" }]).param).toBe("guardrails[0].points");
    const twice = { name: "same", kind: "pii", points: ["input"], action: "flag" };
    expect(refusalOf([twice, twice]).param).toBe("guardrails[1].name");
  });

  it("refuses something other than a list, naming the list", () => {
    expect(refusalOf({ kind: "pii" }).param).toBe("guardrails");
  });
});

// The deny guardrail's words and regexes (src/guardrails/detect-deny.ts).
import { describe, expect, it } from "vitest";
import { DENY_WINDOW_CHARS, detectDenied } from "../../src/guardrails/detect-deny";

function found(text: string, spec: { words?: string[]; patterns?: string[] }): string[] {
  return detectDenied(text, spec).map((span) => text.slice(span.start, span.end));
}

describe("deny", () => {
  it("finds a listed word whole and in any case, not inside another word", () => {
    expect(found("Project Falcon is not falconry; FALCON again.", { words: ["falcon"] })).toEqual(["Falcon", "FALCON"]);
  });

  it("finds a phrase across any spacing", () => {
    expect(found("the  secret\nplan", { words: ["secret plan"] })).toEqual(["secret\nplan"]);
  });

  it("reads whole words of other scripts (no letter either side)", () => {
    expect(found("Проект Сокол и соколиный", { words: ["сокол"] })).toEqual(["Сокол"]);
  });

  it("finds a regex's matches, case-insensitive", () => {
    expect(found("ticket INC-1234 and inc-99", { patterns: ["inc-\\d{3,}"] })).toEqual(["INC-1234"]);
  });

  it("finds a match beyond the first window of a long text", () => {
    const text = `${"a ".repeat(DENY_WINDOW_CHARS)}codename zebra`;
    expect(found(text, { patterns: ["codename \\w+"] })).toEqual(["codename zebra"]);
  });
});

// The rules that make a save the same fact as an old memory (src/memory/memory-match.ts), one a test.
import { describe, expect, it } from "vitest";
import { anyWordQuery, normalise, sameFact, statement } from "../../src/memory/memory-match";

describe("sameFact", () => {
  it("reads texts equal but for case, punctuation and spacing as a duplicate", () => {
    expect(normalise("  I live in LYON!! ")).toBe("i live in lyon");
    expect(sameFact("I live in Lyon.", "i live   in lyon")).toBe("duplicate");
  });

  it("reads the same subject with another value after is, are, am or = as a contradiction", () => {
    expect(sameFact("My favourite colour is green", "My favourite colour is blue")).toBe("contradiction");
    expect(sameFact("My kids are 4 and 7", "My kids are 3 and 6")).toBe("contradiction");
    expect(sameFact("Today I am in Paris", "Today I am in Rome")).toBe("contradiction");
    expect(sameFact("timezone = Europe/Paris", "timezone=UTC")).toBe("contradiction");
  });

  it("does not read 'I am …' facts as one subject", () => {
    expect(statement("I am vegetarian")).toBeNull();
    expect(sameFact("I am vegetarian", "I am a developer")).toBeNull();
  });

  it("reads content words overlapping at least 0.6 as the same fact", () => {
    expect(sameFact("I like green tea in the morning", "I really like green tea every morning")).toBe("overlap");
    expect(sameFact("Has a dog named Rex", "Has a cat named Tom")).toBeNull();
  });

  it("reads different subjects as different facts", () => {
    expect(sameFact("My favourite food is ramen", "My favourite colour is blue")).toBeNull();
  });
});

describe("anyWordQuery", () => {
  it("quotes each word so none is read as FTS5 syntax, content words first", () => {
    expect(anyWordQuery('the NEAR(x) "y" OR z*')).toBe('"near" OR "x" OR "y" OR "z" OR "the" OR "or"');
    expect(anyWordQuery("?! --")).toBeNull();
  });
});

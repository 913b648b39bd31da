// Any words a person or a model searches or saves with reach FTS5 only as quoted words: no text is read as FTS5
// syntax, so a search, a save and a recall answer or refuse with a named field, never fail with an SQL error.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryProblem, MemoryStore } from "../../src/memory/memory-store";

const anyText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 120 }),
  fc.constantFrom('"', "NEAR(a b)", "a OR", "AND", "*", "^x", "col:val", "(", "-x", "'; DROP TABLE memories; --"),
);

/** The refusal's field when the store refuses, else "answered". */
async function outcome(work: Promise<unknown>): Promise<string> {
  try {
    await work;
    return "answered";
  } catch (error) {
    if (error instanceof MemoryProblem) return `refused ${error.param}`;
    throw error;
  }
}

describe("memory search, given any text", () => {
  it("answers or refuses naming the field, for list, search, recall and save", async () => {
    const alice = new MemoryStore(env.DB, "org-fuzz", "alice");
    await alice.save({ text: "Prefers tea over coffee", source: null });
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        expect(["answered", "refused q"]).toContain(await outcome(alice.list({ q: text, limit: 5 })));
        expect(["answered", "refused q"]).toContain(await outcome(alice.search(text, 5)));
        expect(await outcome(alice.recall(text, 5))).toBe("answered");
        expect(["answered", "refused text"]).toContain(await outcome(alice.save({ text, source: null })));
      }),
      { numRuns: 25 },
    );
  });
});

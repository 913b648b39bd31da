// A dataset's bad line is named with its number and the field at fault, so its author finds it at once.
import { describe, expect, it } from "vitest";
import { parseCases, parseDataset } from "../../src/evals/dataset";

const good = JSON.stringify({ name: "hello", messages: [{ role: "user", content: "hi" }], expect: { contains: "hi" } });

function messageOf(jsonl: string): string {
  const outcome = parseDataset(jsonl);
  if (outcome.ok) throw new Error("the dataset was accepted");
  return outcome.message;
}

describe("parseDataset", () => {
  it("reads every case of a good file, skipping blank lines", () => {
    const second = good.replace('"hello"', '"again"');
    const outcome = parseDataset(`${good}\n\n${second}\n`);
    expect(outcome.ok && outcome.cases.map((c) => c.name)).toEqual(["hello", "again"]);
  });

  it("names the line and field of a regex that does not compile", () => {
    const bad = JSON.stringify({ name: "b", messages: [{ role: "user", content: "x" }], expect: { regex: "(" } });
    expect(messageOf(`${good}\n${good.replace('"hello"', '"two"')}\n${bad}`)).toBe(
      "line 3: expect.regex: not a valid regular expression",
    );
  });

  it("names a line that is not JSON", () => {
    expect(messageOf(`${good}\n{"name": `)).toBe("line 2: not valid JSON");
  });

  it("names an unknown expectation", () => {
    const bad = JSON.stringify({ name: "b", messages: [{ role: "user", content: "x" }], expect: { contain: "x" } });
    expect(messageOf(bad)).toBe("line 1: expect.contain: is not a known field");
  });

  it("names a message that is not the user's", () => {
    const bad = JSON.stringify({ name: "b", messages: [{ role: "system", content: "x" }], expect: {} });
    expect(messageOf(bad)).toBe("line 1: messages.0.role: must be 'user'");
  });

  it("names a second case with the same name", () => {
    expect(messageOf(`${good}\n${good}`)).toBe('line 2: name: "hello" is used twice');
  });

  it("refuses an empty file", () => {
    expect(messageOf("\n\n")).toBe("the dataset holds no cases");
  });

  it("names the index of a bad case given as values", () => {
    const outcome = parseCases([JSON.parse(good), { name: "b", messages: [], expect: {} }]);
    expect(outcome).toEqual({ ok: false, message: "cases[1]: messages: must hold at least one user message" });
  });
});

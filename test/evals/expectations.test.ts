// Each expectation kind passes where it holds and fails where it does not, with a line naming it.
import { describe, expect, it } from "vitest";
import type { EvalExpectations } from "../../src/evals/dataset";
import { type CaseObservation, checkExpectations } from "../../src/evals/expectations";

const seen: CaseObservation = {
  answer: '[offline demo model] Hello, Dana! {"ok": true}',
  toolCalls: [{ name: "agent_hello_world", arguments: { name: "Dana", options: { loud: false, extra: 1 } } }],
  steps: 2,
  tokens: 120,
};
const jsonAnswer: CaseObservation = { ...seen, answer: 'Here:\n```json\n{"title": "TUL-012", "sections": 6}\n```' };

const check = (expectations: EvalExpectations, observation = seen) => checkExpectations(expectations, observation);

describe("checkExpectations", () => {
  it("contains: passes when every text is in the answer, fails naming the missing one", () => {
    expect(check({ contains: ["Hello", "Dana"] })).toEqual([]);
    expect(check({ contains: ["Hello", "Ada"] })).toEqual(['contains: "Ada" is not in the answer']);
  });

  it("not_contains: fails naming the text found", () => {
    expect(check({ not_contains: "error" })).toEqual([]);
    expect(check({ not_contains: ["Dana"] })).toEqual(['not_contains: "Dana" is in the answer']);
  });

  it("regex: matches the answer", () => {
    expect(check({ regex: "Hello, [A-Z]\\w+!" })).toEqual([]);
    expect(check({ regex: "^Goodbye" })).toEqual(["regex: /^Goodbye/ does not match the answer"]);
  });

  it("tool_called: the name, and the arguments as a subset", () => {
    expect(check({ tool_called: { name: "agent_hello_world" } })).toEqual([]);
    expect(check({ tool_called: { name: "agent_hello_world", arguments: { options: { loud: false } } } })).toEqual([]);
    expect(check({ tool_called: { name: "agent_hello_world", arguments: { name: "Ada" } } })).toEqual([
      'tool_called: agent_hello_world was called, but never with {"name":"Ada"} (got {"name":"Dana","options":{"loud":false,"extra":1}})',
    ]);
    expect(check({ tool_called: { name: "agent_list_modes" } })).toEqual([
      "tool_called: agent_list_modes was not called (called: agent_hello_world)",
    ]);
  });

  it("json_schema: the answer (or its fenced block) parsed and checked", () => {
    const schema = { type: "object", required: ["title"], properties: { sections: { type: "integer" } } };
    expect(check({ json_schema: schema }, jsonAnswer)).toEqual([]);
    const wrong = { type: "object", properties: { sections: { type: "string" } } };
    expect(check({ json_schema: wrong }, jsonAnswer)).toHaveLength(1);
    expect(check({ json_schema: wrong }, jsonAnswer)[0]).toMatch(/^json_schema: 'sections': /);
    expect(check({ json_schema: schema })).toEqual(["json_schema: the answer is not JSON"]);
  });

  it("max_steps and max_tokens: over all turns", () => {
    expect(check({ max_steps: 2, max_tokens: 120 })).toEqual([]);
    expect(check({ max_steps: 1, max_tokens: 100 })).toEqual([
      "max_steps: 2 steps, more than 1",
      "max_tokens: 120 tokens, more than 100",
    ]);
  });
});

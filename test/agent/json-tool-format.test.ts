// The strict JSON tool-call format (Decision 1), inside a real session object: calls, terminate, corrections.
import { describe, expect, it } from "vitest";
import { JSON_TOOL_CALL_INSTRUCTIONS } from "../../src/prompts/prompt-texts";
import { inSessionObject } from "../fixtures/in-object";
import { scriptUpstream } from "../fixtures/upstream";

type SentBody = { messages: { role: string; content: string }[]; tools?: unknown };
const jsonCall = (tool: string, parameters: unknown, terminate: boolean) =>
  JSON.stringify({ tool, parameters, terminate });

describe("JSON tool-call format", () => {
  it("runs a JSON tool call, feeds its result back, and continues to the answer", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: jsonCall("agent_hello_world", { name: "Dana" }, false) },
      { type: "completion", content: "I greeted Dana." },
    ]);
    const response = await inSessionObject({ toolFormat: "json" }, async ({ reasoner }) =>
      reasoner.startTurn(`greet Dana ${script.marker}`),
    );
    expect(response.ok && response.value).toMatchObject({
      status: "completed",
      text: "I greeted Dana.",
      iterations: 2,
    });
    const sent = (await script.bodies()) as SentBody[];
    expect(sent[0]?.tools).toBeUndefined();
    expect(sent[0]?.messages[0]?.content).toContain(JSON_TOOL_CALL_INSTRUCTIONS);
    expect(sent[1]?.messages.at(-1)?.role).toBe("user");
    expect(sent[1]?.messages.at(-1)?.content).toMatch(
      /^Result of tool agent_hello_world \(call [^)]+\):\n\{"message":"Hello, Dana! Welcome to Aptix\."/,
    );
  });

  it("ends the turn with the tool's result as the answer when terminate is true", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: jsonCall("agent_hello_world", { name: "Ada" }, true) },
    ]);
    const response = await inSessionObject({ toolFormat: "json" }, async ({ reasoner }) =>
      reasoner.startTurn(`greet Ada ${script.marker}`),
    );
    if (!response.ok) throw new Error(response.message);
    expect(response.value.status).toBe("completed");
    expect(response.value.iterations).toBe(1);
    expect(JSON.parse(response.value.text)).toMatchObject({ message: "Hello, Ada! Welcome to Aptix." });
  });

  it("asks for a corrected call after malformed output, and goes on when the next one is valid", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: '{"tool": "agent_hello_world", "parameters": {"name": "Dana"}' },
      { type: "completion", content: jsonCall("agent_hello_world", { name: "Dana" }, true) },
    ]);
    const response = await inSessionObject({ toolFormat: "json" }, async ({ reasoner }) =>
      reasoner.startTurn(`greet ${script.marker}`),
    );
    expect(response.ok && response.value.status).toBe("completed");
    const sent = (await script.bodies()) as SentBody[];
    expect(sent[1]?.messages.at(-1)?.content).toMatch(
      /^Your last reply looked like a tool call but could not be used: it is not valid JSON/,
    );
  });

  it("fails the turn after 3 malformed tool calls in a row, with a clear message, and logs each", async () => {
    const malformed = { type: "completion" as const, content: '{"tool": "agent_hello_world", "parameters": {}}' };
    const script = await scriptUpstream([malformed, malformed, malformed]);
    const { response, warnings } = await inSessionObject({ toolFormat: "json" }, async ({ reasoner, logger }) => ({
      response: await reasoner.startTurn(`greet ${script.marker}`),
      warnings: logger.events.filter((e) => e.tag === "[AgentReasoner_MalformedToolCall]"),
    }));
    if (!response.ok) throw new Error(response.message);
    expect(response.value.status).toBe("failed");
    expect(response.value.error?.code).toBe("malformed_tool_calls");
    expect(response.value.error?.message).toMatch(
      /^The model sent 3 malformed tool calls in a row \(last problem: Invalid 'terminate' in the tool call: /,
    );
    expect(warnings).toHaveLength(3);
    expect(warnings[0]?.pairs).toContainEqual(["Output", '{"tool": "agent_hello_world", "parameters": {}}']);
  });

  it("treats prose as the answer", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Plain answer, no tools needed." }]);
    const response = await inSessionObject({ toolFormat: "json" }, async ({ reasoner }) =>
      reasoner.startTurn(`hi ${script.marker}`),
    );
    expect(response.ok && response.value.text).toBe("Plain answer, no tools needed.");
  });
});

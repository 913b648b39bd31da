// The offline demo model's memory: "remember that …" calls memory_save with the fact as said, and a question about
// the person is answered from the system prompt's memory section (as src/prompts/memory-section.ts writes it).
import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../../src/llm/chat-model";
import { DemoChatModel } from "../../src/llm/demo-model";
import { renderMemorySection } from "../../src/prompts/memory-section";
import type { ChatTool } from "../../src/wire/openai";

const tool = (name: string): ChatTool => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object", properties: {} } },
});
const MEMORY_TOOLS = ["memory_save", "memory_search", "memory_forget"].map(tool);

const SECTION =
  renderMemorySection(
    [
      {
        id: "mem_a",
        text: "My favourite colour is teal.",
        scope: "user",
        pinned: false,
        createdAt: "2026-01-01T00:00:00Z",
      },
      { id: "mem_b", text: "We ship on Thursdays.", scope: "org", pinned: true, createdAt: "2026-01-02T00:00:00Z" },
    ],
    1_000,
  )?.text ?? "";

const ask = (said: string, options: { system?: string; tools?: ChatTool[] } = {}): ChatRequest => ({
  messages: [
    { role: "system", content: `You are Aptix.\n\n## Mode: General (general)\nHelp.${options.system ?? ""}` },
    { role: "user", content: said },
  ],
  tools: options.tools ?? MEMORY_TOOLS,
});

const demo = new DemoChatModel(0);

describe("the demo model's memory", () => {
  it("saves what the person asks it to remember, as they said it, with memory_save", async () => {
    const response = await demo.complete(ask("remember that my favourite colour is teal"));
    expect(response.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["memory_save", { text: "My favourite colour is teal." }],
    ]);
  });

  it("does not save when the mode does not offer memory_save", async () => {
    const response = await demo.complete(ask("remember that my favourite colour is teal", { tools: [] }));
    expect(response.toolCalls).toEqual([]);
  });

  it("answers a question about the person from the memory section, quoting the memory", async () => {
    const response = await demo.complete(ask("what is my favourite colour?", { system: `\n\n${SECTION}` }));
    expect(response.content).toBe(
      '[offline demo model] From what you asked me to remember: "My favourite colour is teal."',
    );
  });

  it("lists what it knows about the person, the organization's marked", async () => {
    const response = await demo.complete(ask("What do you know about me?", { system: `\n\n${SECTION}` }));
    expect(response.content?.split("\n")).toEqual([
      "[offline demo model] This is what I know about you:",
      "- We ship on Thursdays. (your organization's)",
      "- My favourite colour is teal.",
    ]);
  });

  it("forgets by the person's words with memory_forget", async () => {
    const response = await demo.complete(ask("forget that my favourite colour is teal."));
    expect(response.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["memory_forget", { query: "my favourite colour is teal" }],
    ]);
  });

  it("says what it saved once memory_save answers", async () => {
    const request = ask("remember that my favourite colour is teal");
    const result = { outcome: "added", memory: { id: "mem_a", text: "My favourite colour is teal." }, previous: null };
    const response = await demo.complete({
      ...request,
      messages: [
        ...request.messages,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "memory_save", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: JSON.stringify(result) },
      ],
    });
    expect(response.content).toBe(
      '[offline demo model] Saved to memory: "My favourite colour is teal." I will know it in our next conversations.',
    );
  });
});

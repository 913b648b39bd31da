// SystemPromptEnhancer: base + mode prompt + the mode's tools by category, the JSON format, diagrams, a budget.
import { describe, expect, it } from "vitest";
import type { AgentMode } from "../../src/modes/agent-mode";
import { JSON_TOOL_CALL_INSTRUCTIONS, MERMAID_INSTRUCTIONS } from "../../src/prompts/prompt-texts";
import { type EnhancedPrompt, type EnhanceInput, enhanceSystemPrompt } from "../../src/prompts/system-prompt-enhancer";
import { estimateTokens } from "../../src/token-estimate";
import type { AgentTool } from "../../src/tools/contract";
import { createProductionTools } from "../../src/tools/index";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { RecordingSessionManager, sampleMode, stubCatalog } from "../fixtures/tool-context";

/** The design document's Decision 1, "System Prompt Instruction", copied from the specification. */
const DECISION_1_TEXT = `When you need to use a tool, output ONLY a JSON object in this exact format:
{
  "tool": "tool_name",
  "parameters": { "param1": "value1", "param2": "value2" },
  "terminate": true
}

Set "terminate" to false if you need to continue working after the tool result.
Set "terminate" to true if this is your final action or you want to return a response to the user.`;

const BASE = "You are the base prompt of the enhancer tests.";
const ALWAYS = ["agent_change_mode", "agent_list_modes"];
const HELLO = "agent_hello_world";

const productionTools = (): AgentTool[] =>
  createProductionTools({
    logger: new RecordingAdminLogger(),
    sessionManager: new RecordingSessionManager(),
    catalog: stubCatalog([sampleMode()]),
  });

const tool = (tools: readonly AgentTool[], name: string): AgentTool => {
  const found = tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};

/** A mode offering the general and workspace tools (priorities: hello 10, write 55, read 60). */
const busyMode = (overrides: Partial<AgentMode> = {}): AgentMode =>
  sampleMode({
    key: "workspace",
    displayName: "Workspace",
    systemPrompt: "You work on the user's files.",
    tools: ["workspace_write_file", HELLO, "workspace_read_file"],
    ...overrides,
  });

const enhance = (overrides: Partial<EnhanceInput> = {}): EnhancedPrompt =>
  enhanceSystemPrompt({
    basePrompt: BASE,
    mode: busyMode(),
    registeredTools: productionTools(),
    format: "native",
    budgetTokens: 100_000,
    ...overrides,
  });

/** The prompt's `## ` sections by heading; the text before the first heading is under "". */
function sections(prompt: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = prompt.split(/^## /m);
  out.set("", (parts[0] ?? "").trim());
  for (const part of parts.slice(1)) {
    const newline = part.indexOf("\n");
    out.set(part.slice(0, newline), part.slice(newline + 1).trim());
  }
  return out;
}

/** The tool names listed under each `### Category` heading of the Tools section, in order. */
function toolsByCategory(prompt: string): [string, string[]][] {
  const tools = sections(prompt).get("Tools") ?? "";
  return tools
    .split(/^### /m)
    .slice(1)
    .map((block) => [
      block.slice(0, block.indexOf("\n")),
      [...block.matchAll(/^#### (\S+)$/gm)].map((m) => m[1] ?? ""),
    ]);
}

/** One tool's block: from its `#### name` line to the next heading. */
function toolBlock(prompt: string, name: string): string {
  const start = prompt.indexOf(`#### ${name}\n`);
  if (start < 0) return "";
  const heading = `#### ${name}\n`;
  const rest = prompt.slice(start + heading.length);
  const next = rest.search(/^#{2,4} /m);
  return `${heading}${next < 0 ? rest : rest.slice(0, next)}`.trim();
}

describe("SystemPromptEnhancer", () => {
  it("starts with the base prompt, then the mode's heading and its system prompt", () => {
    const result = enhance({ basePrompt: `  ${BASE}\n\n` });
    const parts = sections(result.prompt);
    expect(result.prompt.startsWith(`${BASE}\n\n## Mode: Workspace (workspace)\n`)).toBe(true);
    expect(parts.get("")).toBe(BASE);
    expect(parts.get("Mode: Workspace (workspace)")).toBe("You work on the user's files.");
  });

  it("offers the mode's tools plus agent_change_mode and agent_list_modes", () => {
    const result = enhance();
    expect(result.tools.map((t) => t.name)).toEqual([...ALWAYS, HELLO, "workspace_read_file", "workspace_write_file"]);
    expect(result.omittedTools).toEqual([]);
    expect(result.compressedTools).toEqual([]);
    expect(result.unknownTools).toEqual([]);
  });

  it("offers agent_change_mode and agent_list_modes to a mode that lists no tools", () => {
    const result = enhance({ mode: busyMode({ tools: [] }) });
    expect(result.tools.map((t) => t.name)).toEqual(ALWAYS);
    expect(toolsByCategory(result.prompt)).toEqual([["Session", ALWAYS]]);
  });

  it("describes no registered tool that the mode does not offer", () => {
    const result = enhance({ mode: busyMode({ tools: [HELLO] }) });
    expect(result.tools.map((t) => t.name)).toEqual([...ALWAYS, HELLO]);
    expect(result.prompt).not.toContain("workspace_read_file");
    expect(result.prompt).not.toContain("workspace_write_file");
  });

  it("describes each tool with its ToolUsageMetadata and every parameter of its schema", () => {
    const tools = productionTools();
    const result = enhance({ registeredTools: tools });
    for (const name of [...ALWAYS, HELLO, "workspace_read_file", "workspace_write_file"]) {
      const described = tool(tools, name);
      const { properties, required } = described.getSchema().parameters;
      const expected = [
        `#### ${name}`,
        described.toolUsageMetadata,
        "Parameters:",
        ...Object.entries(properties).map(
          ([param, schema]) =>
            `- \`${param}\` (${String(schema.type)}, ${required.includes(param) ? "required" : "optional"}): ${String(schema.description)}`,
        ),
      ];
      expect(toolBlock(result.prompt, name).split("\n")).toEqual(expected);
    }
  });

  it("names a required parameter as required and an optional one as optional", () => {
    const block = toolBlock(enhance().prompt, "workspace_read_file");
    expect(block).toMatch(/^- `path` \(string, required\): /m);
    expect(block).toMatch(/^- `maxBytes` \(integer, optional\): /m);
  });

  it("groups the tools under their categories, in the categories' order", () => {
    expect(toolsByCategory(enhance().prompt)).toEqual([
      ["Session", ALWAYS],
      ["General", [HELLO]],
      ["Workspace", ["workspace_read_file", "workspace_write_file"]],
    ]);
  });

  it("adds Decision 1's JSON tool-call instructions word for word when the model uses the JSON format", () => {
    const result = enhance({ format: "json" });
    expect(JSON_TOOL_CALL_INSTRUCTIONS).toBe(DECISION_1_TEXT);
    expect(sections(result.prompt).get("Tool call format")).toBe(DECISION_1_TEXT);
  });

  it("leaves the JSON tool-call instructions out for native function calling", () => {
    const result = enhance({ format: "native" });
    expect([...sections(result.prompt).keys()]).not.toContain("Tool call format");
    expect(result.prompt).not.toContain('"terminate"');
  });

  it("ends with the mermaid instructions in both formats", () => {
    for (const format of ["native", "json"] as const) {
      const parts = sections(enhance({ format }).prompt);
      expect([...parts.keys()].at(-1)).toBe("Diagrams");
      expect(parts.get("Diagrams")).toBe(MERMAID_INSTRUCTIONS);
      expect(parts.get("Diagrams")).toContain("```mermaid");
    }
  });

  it("orders the sections base, mode, tools, tool call format, diagrams", () => {
    expect([...sections(enhance({ format: "json" }).prompt).keys()]).toEqual([
      "",
      "Mode: Workspace (workspace)",
      "Tools",
      "Tool call format",
      "Diagrams",
    ]);
  });

  it("gives the same bytes for the same inputs", () => {
    const first = enhance({ format: "json" });
    const second = enhance({ format: "json" });
    expect(second.prompt).toBe(first.prompt);
    expect(second.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    expect(second.estimatedTokens).toBe(first.estimatedTokens);
  });

  it("gives the same bytes whatever the order of the registry and of the mode's tool list", () => {
    const first = enhance();
    const reordered = enhance({
      registeredTools: productionTools().reverse(),
      mode: busyMode({ tools: ["workspace_read_file", HELLO, "workspace_write_file", "agent_list_modes"] }),
    });
    expect(reordered.prompt).toBe(first.prompt);
  });

  it("reports the mode's tools that are not registered and describes only the registered ones", () => {
    const result = enhance({ mode: busyMode({ tools: [HELLO, "no_such_tool"] }) });
    expect(result.unknownTools).toEqual(["no_such_tool"]);
    expect(result.tools.map((t) => t.name)).toEqual([...ALWAYS, HELLO]);
    expect(result.prompt).not.toContain("no_such_tool");
  });

  it("estimates about four characters a token, rounding up", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(2);
    const result = enhance();
    expect(result.estimatedTokens).toBe(Math.ceil(result.prompt.length / 4));
  });

  it("keeps every tool in full when the prompt fits the budget", () => {
    const full = enhance();
    const exact = enhance({ budgetTokens: full.estimatedTokens });
    expect(exact.prompt).toBe(full.prompt);
    expect(exact.omittedTools).toEqual([]);
    expect(exact.compressedTools).toEqual([]);
    expect(exact.estimatedTokens).toBeLessThanOrEqual(full.estimatedTokens);
  });

  it("compresses the lowest-priority tool's description first when the prompt is just over the budget", () => {
    const tools = productionTools();
    const full = enhance({ registeredTools: tools });
    const result = enhance({ registeredTools: tools, budgetTokens: full.estimatedTokens - 1 });
    expect(result.compressedTools).toEqual([HELLO]);
    expect(result.omittedTools).toEqual([]);
    expect(result.estimatedTokens).toBeLessThanOrEqual(full.estimatedTokens - 1);
    const hello = tool(tools, HELLO);
    expect(toolBlock(result.prompt, HELLO).split("\n")).toEqual([
      `#### ${HELLO}`,
      hello.getSchema().description,
      "Parameters:",
      "- `name` (string, required)",
    ]);
    expect(result.prompt).not.toContain(hello.toolUsageMetadata);
  });

  it("trims as the budget shrinks: compresses, then leaves out, the lowest-priority tools first", () => {
    const full = enhance();
    const seen: string[] = [];
    for (let budget = full.estimatedTokens; budget >= 1; budget--) {
      const result = enhance({ budgetTokens: budget });
      const state = `compressed=[${result.compressedTools.join(",")}] omitted=[${result.omittedTools.join(",")}]`;
      if (seen.at(-1) !== state) seen.push(state);
    }
    expect(seen).toEqual([
      "compressed=[] omitted=[]",
      `compressed=[${HELLO}] omitted=[]`,
      `compressed=[${HELLO},workspace_write_file] omitted=[]`,
      `compressed=[${HELLO},workspace_write_file,workspace_read_file] omitted=[]`,
      `compressed=[workspace_write_file,workspace_read_file] omitted=[${HELLO}]`,
      `compressed=[workspace_read_file] omitted=[${HELLO},workspace_write_file]`,
      `compressed=[] omitted=[${HELLO},workspace_write_file,workspace_read_file]`,
    ]);
  });

  it("offers exactly the tools it describes, and no tool it left out", () => {
    const full = enhance();
    for (let budget = full.estimatedTokens; budget >= 1; budget -= 7) {
      const result = enhance({ budgetTokens: budget });
      const described = toolsByCategory(result.prompt).flatMap(([, names]) => names);
      expect(described.sort()).toEqual(result.tools.map((t) => t.name).sort());
      for (const name of result.omittedTools) expect(result.prompt).not.toContain(`#### ${name}\n`);
    }
  });

  it("never leaves out or compresses agent_change_mode and agent_list_modes, even over the budget", () => {
    const tools = productionTools();
    const result = enhance({ registeredTools: tools, budgetTokens: 1 });
    expect(result.tools.map((t) => t.name)).toEqual(ALWAYS);
    expect(result.omittedTools).toEqual([HELLO, "workspace_write_file", "workspace_read_file"]);
    expect(result.compressedTools).toEqual([]);
    for (const name of ALWAYS) expect(toolBlock(result.prompt, name)).toContain(tool(tools, name).toolUsageMetadata);
    expect(result.estimatedTokens).toBeGreaterThan(1);
  });

  it("keeps the base prompt, the mode prompt and the instructions whatever the budget", () => {
    const result = enhance({ format: "json", budgetTokens: 1 });
    const parts = sections(result.prompt);
    expect(parts.get("")).toBe(BASE);
    expect(parts.get("Mode: Workspace (workspace)")).toBe("You work on the user's files.");
    expect(parts.get("Tool call format")).toBe(DECISION_1_TEXT);
    expect(parts.get("Diagrams")).toBe(MERMAID_INSTRUCTIONS);
  });
});

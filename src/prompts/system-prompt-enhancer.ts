// SystemPromptEnhancer: base prompt + mode prompt + the mode's tools by category (within a token budget)
// + the JSON tool-call format when the model uses it + diagram instructions + what the agent knows about the person
// (memory-section.ts, last, so the part every session of a mode shares comes first). Same inputs, same bytes.
import type { AgentMode } from "../modes/agent-mode";
import { estimateTokens } from "../token-estimate";
import { TOOL_CATEGORIES, type ToolCategory } from "../tools/categories";
import type { AgentTool } from "../tools/contract";
import { ALWAYS_OFFERED_TOOLS } from "../tools/index";
import { type MemorySection, memorySectionBudget, type RecalledMemory, renderMemorySection } from "./memory-section";
import { JSON_TOOL_CALL_INSTRUCTIONS, MERMAID_INSTRUCTIONS } from "./prompt-texts";

export type ToolCallFormat = "native" | "json";

export interface EnhanceInput {
  basePrompt: string;
  mode: AgentMode;
  /** Every registered tool; the mode's list and the always-offered tools are picked from them. */
  registeredTools: readonly AgentTool[];
  format: ToolCallFormat;
  /** Budget for the whole prompt, in estimated tokens. */
  budgetTokens: number;
  /** The categories the tools are grouped by (the built-in ones, and one per MCP server the mode offers). */
  categories?: readonly ToolCategory[];
  /**
   * The session owner's memories as recall gave them (pinned first, then the most relevant); absent or empty, the
   * prompt has no memory section. The section fills at most MEMORY_PROMPT_SHARE of the budget; the tools, the rest.
   */
  memories?: readonly RecalledMemory[] | undefined;
}

export interface EnhancedPrompt {
  prompt: string;
  /** The tools the prompt describes, and the only ones the model is offered. */
  tools: AgentTool[];
  /** Tools of the mode left out to fit the budget, lowest priority first. */
  omittedTools: string[];
  /** Tools described in their short form to fit the budget. */
  compressedTools: string[];
  /** Mode tools that are not registered (a catalog naming a tool that does not exist). */
  unknownTools: string[];
  /** The ids of the memories the prompt shows, in its order. */
  memories: string[];
  estimatedTokens: number;
}

const orderIn = (categories: readonly ToolCategory[]) => (id: string) =>
  categories.find((c) => c.id === id)?.order ?? Number.MAX_SAFE_INTEGER;

function describeParameters(tool: AgentTool, compressed: boolean): string[] {
  const { properties, required } = tool.getSchema().parameters;
  return Object.entries(properties).map(([name, property]) => {
    const need = required.includes(name) ? "required" : "optional";
    const head = `- \`${name}\` (${String(property.type)}, ${need})`;
    return compressed ? head : `${head}: ${String(property.description ?? "")}`;
  });
}

function renderTool(tool: AgentTool, compressed: boolean): string {
  const parameters = describeParameters(tool, compressed);
  const body = compressed ? tool.getSchema().description : tool.toolUsageMetadata;
  const params = parameters.length > 0 ? `Parameters:\n${parameters.join("\n")}` : "Parameters: none";
  return `#### ${tool.name}\n${body}\n${params}`;
}

function render(
  input: EnhanceInput,
  tools: AgentTool[],
  compressed: ReadonlySet<string>,
  memory: MemorySection | null,
): string {
  const sections = [
    input.basePrompt.trim(),
    `## Mode: ${input.mode.displayName} (${input.mode.key})\n${input.mode.systemPrompt.trim()}`,
  ];
  const toolLines = [
    "## Tools",
    "You can call these tools, grouped by category. Call a tool only when it helps with the request.",
  ];
  for (const category of [...(input.categories ?? TOOL_CATEGORIES)].sort((a, b) => a.order - b.order)) {
    const inCategory = tools.filter((t) => t.category === category.id);
    if (inCategory.length === 0) continue;
    toolLines.push(`### ${category.name}\n${category.description}`);
    for (const tool of inCategory) toolLines.push(renderTool(tool, compressed.has(tool.name)));
  }
  sections.push(toolLines.join("\n\n"));
  if (input.format === "json") sections.push(`## Tool call format\n${JSON_TOOL_CALL_INSTRUCTIONS}`);
  sections.push(`## Diagrams\n${MERMAID_INSTRUCTIONS}`);
  if (memory) sections.push(memory.text);
  return `${sections.join("\n\n")}\n`;
}

export function enhanceSystemPrompt(input: EnhanceInput): EnhancedPrompt {
  const categoryOrder = orderIn(input.categories ?? TOOL_CATEGORIES);
  const byName = new Map(input.registeredTools.map((tool) => [tool.name, tool]));
  const wanted = [...new Set([...ALWAYS_OFFERED_TOOLS, ...input.mode.tools])];
  const unknownTools = wanted.filter((name) => !byName.has(name));
  const tools = wanted
    .flatMap((name) => byName.get(name) ?? [])
    .sort((a, b) => categoryOrder(a.category) - categoryOrder(b.category) || a.name.localeCompare(b.name));

  // Trimming order: the lowest priority first (ties by name), never the always-offered tools.
  const trimmable = tools
    .filter((t) => !ALWAYS_OFFERED_TOOLS.includes(t.name))
    .sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
  const compressed = new Set<string>();
  const omitted = new Set<string>();
  const offered = () => tools.filter((t) => !omitted.has(t.name));
  // Made once, within its own share: the tools are trimmed to what the rest of the budget leaves.
  const memory = input.memories?.length
    ? renderMemorySection(input.memories, memorySectionBudget(input.budgetTokens))
    : null;
  let prompt = render(input, offered(), compressed, memory);

  for (const tool of trimmable) {
    if (estimateTokens(prompt) <= input.budgetTokens) break;
    compressed.add(tool.name);
    prompt = render(input, offered(), compressed, memory);
  }
  for (const tool of trimmable) {
    if (estimateTokens(prompt) <= input.budgetTokens) break;
    compressed.delete(tool.name);
    omitted.add(tool.name);
    prompt = render(input, offered(), compressed, memory);
  }

  return {
    prompt,
    tools: offered(),
    omittedTools: trimmable.filter((t) => omitted.has(t.name)).map((t) => t.name),
    compressedTools: trimmable.filter((t) => compressed.has(t.name)).map((t) => t.name),
    unknownTools,
    memories: memory?.shown ?? [],
    estimatedTokens: estimateTokens(prompt),
  };
}

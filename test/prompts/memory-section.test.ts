// The "What you know about this person" section: whole memories within its budget, pinned first, the same bytes
// whatever recall's order when all of them fit, relevance choosing only when they do not.
import { describe, expect, it } from "vitest";
import { newMemoryId } from "../../src/memory/memory-store";
import {
  MEMORY_ID_CHARS,
  MEMORY_RECALL_CAP,
  MEMORY_SECTION_HEADING,
  memoryRecallLimit,
  memorySectionBudget,
  type RecalledMemory,
  renderMemorySection,
} from "../../src/prompts/memory-section";
import { enhanceSystemPrompt } from "../../src/prompts/system-prompt-enhancer";
import { estimateTokens } from "../../src/token-estimate";
import { sampleMode } from "../fixtures/tool-context";

const memory = (n: number, overrides: Partial<RecalledMemory> = {}): RecalledMemory => ({
  id: `mem_${String(n).padStart(4, "0")}`,
  text: `Fact number ${n} about this person, said in a sentence of ordinary length.`,
  scope: "user",
  pinned: false,
  createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  ...overrides,
});

const idsOf = (text: string) => [...text.matchAll(/^- \[(mem_\d+)\]/gm)].map((m) => m[1]);

describe("the memory section", () => {
  it("stays within its budget with 1,000 memories, pinned ones first, each memory whole", () => {
    const recalled = Array.from({ length: 1000 }, (_, n) =>
      memory(n, { pinned: n % 100 === 7, text: `Fact ${n}: ${"detail ".repeat(n % 40)}`.trim() }),
    );
    // Recall's order: pinned first, then the rest in an order of its own (relevance).
    const ordered = [...recalled.filter((m) => m.pinned), ...recalled.filter((m) => !m.pinned).reverse()];
    const budget = memorySectionBudget(6_000);
    const section = renderMemorySection(ordered, budget);

    expect(estimateTokens(section?.text ?? "")).toBeLessThanOrEqual(budget);
    const shown = idsOf(section?.text ?? "");
    expect(shown.slice(0, 10)).toEqual(recalled.filter((m) => m.pinned).map((m) => m.id));
    expect(shown.length).toBeLessThan(1000);
    for (const line of (section?.text ?? "").split("\n").filter((l) => l.startsWith("- ["))) {
      const id = /^- \[(mem_\d+)\]/.exec(line)?.[1];
      const whole = recalled.find((m) => m.id === id);
      expect(line.endsWith(whole?.text ?? "?")).toBe(true);
    }
  });

  it("lists every memory in the same order whatever the order recall gave them in, when all fit", () => {
    const all = [memory(3), memory(1, { pinned: true }), memory(2, { scope: "org" }), memory(4)];
    const one = renderMemorySection(all, 1_000);
    const other = renderMemorySection([...all].reverse(), 1_000);
    expect(one?.text).toBe(other?.text);
    expect(idsOf(one?.text ?? "")).toEqual(["mem_0001", "mem_0002", "mem_0003", "mem_0004"]);
  });

  it("lets recall's order choose which memories are shown when they do not all fit", () => {
    const all = Array.from({ length: 50 }, (_, n) => memory(n));
    const budget = 200;
    const first = renderMemorySection(all, budget);
    const last = renderMemorySection([...all].reverse(), budget);
    expect(idsOf(first?.text ?? "")).toContain("mem_0000");
    expect(idsOf(last?.text ?? "")).toContain("mem_0049");
    expect(idsOf(last?.text ?? "")).not.toContain("mem_0000");
  });

  it("marks pinned and organization memories and keeps each memory on one line", () => {
    const section = renderMemorySection(
      [memory(1, { pinned: true, text: "Their name\nis Ada." }), memory(2, { scope: "org" })],
      1_000,
    );
    expect(section?.text.split("\n").slice(2)).toEqual([
      "- [mem_0001] (pinned) Their name is Ada.",
      `- [mem_0002] (the organization's) ${memory(2).text}`,
    ]);
  });

  it("reads one memory more than could fit in the budget, so fewer read means all of them", () => {
    const budget = memorySectionBudget(6_000);
    const limit = memoryRecallLimit(budget);
    expect(newMemoryId()).toHaveLength(MEMORY_ID_CHARS);
    const tiny = Array.from({ length: limit }, (_, n) => memory(n, { id: newMemoryId(), text: "x" }));
    expect(renderMemorySection(tiny, budget)?.shown.length).toBeLessThan(limit);
    expect(memoryRecallLimit(1_000_000)).toBe(MEMORY_RECALL_CAP);
  });

  it("is the enhanced prompt's last section, and the tools are trimmed to what it leaves of the budget", () => {
    const memories = Array.from({ length: 30 }, (_, n) => memory(n));
    const input = {
      basePrompt: "Base.",
      mode: sampleMode(),
      registeredTools: [],
      format: "native" as const,
      budgetTokens: 2_000,
    };
    const enhanced = enhanceSystemPrompt({ ...input, memories });
    expect(enhanced.prompt.slice(enhanced.prompt.indexOf(MEMORY_SECTION_HEADING)).split("\n## ")).toHaveLength(1);
    expect(enhanced.memories).toEqual(memories.map((m) => m.id).slice(0, enhanced.memories.length));
    expect(enhanced.estimatedTokens).toBeLessThanOrEqual(2_000);
    expect(enhanceSystemPrompt(input).prompt).not.toContain(MEMORY_SECTION_HEADING);
  });
});

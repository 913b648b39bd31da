// The offline demo model's memory: "remember that …" saves the fact as the person said it (memory_save), "forget
// that …" forgets it (memory_forget), and a question about the person is answered from the system prompt's "What you
// know about this person" section, quoting the memory it found, so a new conversation shows what the last one saved.
// Plain word matching, no understanding: docs/memory.md says what it does.

/** The section's heading and its lines, as src/prompts/memory-section.ts writes them (prompts/ is a layer above). */
const SECTION_HEADING = "## What you know about this person";
const MEMORY_LINE = /^- \[([^\]]+)\]((?: \((?:pinned|the organization's)\))*) (.+)$/;

export interface PromptMemory {
  id: string;
  text: string;
  org: boolean;
}

type Call = { tool: string; args: Record<string, unknown> };

/** The memories the system prompt shows, in its order; none when it has no memory section. */
export function promptMemories(system: string): PromptMemory[] {
  const start = system.indexOf(`${SECTION_HEADING}\n`);
  if (start < 0) return [];
  const body = system.slice(start + SECTION_HEADING.length + 1).split(/\n## /)[0] ?? "";
  return body.split("\n").flatMap((line) => {
    const m = MEMORY_LINE.exec(line);
    return m ? [{ id: m[1] ?? "", text: m[3] ?? "", org: (m[2] ?? "").includes("organization") }] : [];
  });
}

/** The fact after "remember (that)", as said, its first letter capitalised and its end a full stop. */
function fact(words: string): string {
  const text = words.trim().replace(/[.!]+$/, "");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** A call for "remember that …" or "forget that …", when the mode offers the tool. */
export function memoryCall(said: string, tools: ReadonlySet<string>): Call | null {
  const remember = /^(?:please\s+)?remember(?:\s+that)?\s+(.+)$/is.exec(said);
  if (remember && tools.has("memory_save")) return { tool: "memory_save", args: { text: fact(remember[1] ?? "") } };
  const forget = /^(?:please\s+)?forget(?:\s+that)?\s+(.+)$/is.exec(said);
  if (forget && tools.has("memory_forget")) {
    return { tool: "memory_forget", args: { query: (forget[1] ?? "").trim().replace(/[.!?]+$/, "") } };
  }
  return null;
}

// Words too common to tell one memory from another.
const COMMON = new Set(
  "a an the is are was were be am i me my mine you your do does did what whats who whom where when which how why " +
    "of to in on at for with about and or that this it its there know remember tell can could please".split(" "),
);

const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 1 && !COMMON.has(w)),
  );

const PREFIX = "[offline demo model]";

/**
 * An answer from the memories the prompt shows: all of them for "what do you know about me?", the one sharing the most
 * words with a question about the person ("what is my favourite colour?"); null when the message asks neither.
 */
export function answerFromMemory(said: string, memories: readonly PromptMemory[]): string | null {
  const lower = said.toLowerCase();
  if (/\bwhat do you (?:know|remember) about (?:me|us)\b/.test(lower)) {
    if (memories.length === 0) {
      return `${PREFIX} I know nothing about you yet. Tell me "remember that …" and I will keep it for our next conversations.`;
    }
    const lines = memories.map((m) => `- ${m.text}${m.org ? " (your organization's)" : ""}`);
    return `${PREFIX} This is what I know about you:\n${lines.join("\n")}`;
  }
  if (!/\?\s*$/.test(said) || !/\b(?:my|me|i|am)\b/.test(lower)) return null;
  const asked = words(said);
  let best: { memory: PromptMemory; shared: number } | null = null;
  for (const memory of memories) {
    const shared = [...words(memory.text)].filter((w) => asked.has(w)).length;
    if (shared > 0 && (!best || shared > best.shared)) best = { memory, shared };
  }
  return best ? `${PREFIX} From what you asked me to remember: "${best.memory.text}"` : null;
}

/** What the demo says of a memory tool's result. */
export function describeMemoryResult(name: string, value: Record<string, unknown>): string | null {
  if (name === "memory_save" && typeof value.memory === "object" && value.memory !== null) {
    const text = String((value.memory as { text?: unknown }).text ?? "");
    const previous = typeof value.previous === "string" ? ` It replaces "${value.previous}".` : "";
    return `${PREFIX} Saved to memory: "${text}"${previous} I will know it in our next conversations.`;
  }
  if (name === "memory_forget" && Array.isArray(value.forgotten)) {
    const texts = (value.forgotten as { text?: unknown }[]).map((m) => `"${String(m.text ?? "")}"`);
    return texts.length > 0
      ? `${PREFIX} Forgotten: ${texts.join(", ")}.`
      : `${PREFIX} I had nothing like that to forget.`;
  }
  return null;
}

// Recall without a tool call: what the agent knows about the session's owner is in the system prompt the model is
// sent at a turn's start (the next session's too), never another person's or org's; forgetting takes it out; the
// section keeps to its budget and its bytes; memory off (org or mode) leaves no section, no memory tool, nothing stored.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/auth/api-keys";
import { MEMORY_TOOL_NAMES } from "../../src/memory/memory-policy";
import { MemoryStore, newMemoryId } from "../../src/memory/memory-store";
import { MEMORY_SECTION_HEADING, memorySectionBudget } from "../../src/prompts/memory-section";
import { settings } from "../../src/settings";
import { estimateTokens } from "../../src/token-estimate";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { call } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

type Sent = { messages: { role: string; content: string }[]; tools?: { function: { name: string } }[] };

/** A person of `org` with a key of their own (each test its own people, so one's memories never reach another). */
async function person(org: string, user: string, scopes: string[] = ["chat"]): Promise<string> {
  const key = `test-recall-key-${org}-${user}`;
  await env.DB.prepare("INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(`recall_${org}_${user}`, await hashApiKey(key), user, org, user, JSON.stringify(scopes))
    .run();
  return key;
}

async function ok(method: string, path: string, key: string, body?: unknown): Promise<unknown> {
  const { status, json } = await call(method, path, body, key);
  if (status >= 300) throw new Error(`${method} ${path} answered ${status}: ${JSON.stringify(json)}`);
  return json;
}

/** One turn in a new session of `key`'s person (in `mode`), the model answering `steps`: the response and what it was sent. */
async function turnInNewSession(
  key: string,
  content: string,
  steps: Parameters<typeof scriptUpstream>[0] = [{ type: "completion", content: "OK." }],
  mode?: string,
): Promise<{ response: AgentExecuteResponse; sent: Sent[]; sessionId: string }> {
  const script = await scriptUpstream(steps);
  const { sessionId } = (await ok("POST", "/context/sessions", key, mode ? { mode } : {})) as { sessionId: string };
  const response = (await ok("POST", `/context/sessions/${sessionId}/messages`, key, {
    content: `${content} ${script.marker}`,
  })) as AgentExecuteResponse;
  return { response, sent: (await script.bodies()) as Sent[], sessionId };
}

const systemOf = (sent: Sent[]) => sent[0]?.messages[0]?.content ?? "";
const sectionOf = (sent: Sent[]) => {
  const system = systemOf(sent);
  const at = system.indexOf(MEMORY_SECTION_HEADING);
  return at < 0 ? null : system.slice(at).trimEnd();
};
const toolsOf = (sent: Sent[]) => (sent[0]?.tools ?? []).map((t) => t.function.name);
const toolCall = (name: string, args: unknown) => ({
  type: "completion" as const,
  toolCalls: [{ name, arguments: JSON.stringify(args) }],
});

describe("what the agent knows about the person, in the prompt", () => {
  it("shows a memory saved by the tool in one session in the system prompt of the person's next session", async () => {
    const key = await person("org-a", "recall-dana");
    const saved = await turnInNewSession(key, "Remember that my favourite colour is teal.", [
      toolCall("memory_save", { text: "Their favourite colour is teal." }),
      { type: "completion", content: "Saved." },
    ]);
    const memory = JSON.parse(saved.response.toolCalls[0]?.resultJson ?? "{}").memory as { id: string };

    const next = await turnInNewSession(key, "What colour should the slides be?");
    expect(sectionOf(next.sent)?.split("\n").at(-1)).toBe(`- [${memory.id}] Their favourite colour is teal.`);
  });

  it("never shows a person's memories to another person of the org or to another org", async () => {
    const owner = await person("org-a", "recall-owen");
    await new MemoryStore(env.DB, "org-a", "recall-owen").save({ text: "Owen's badge number is 4471.", source: null });
    const colleague = await turnInNewSession(await person("org-a", "recall-cleo"), "What is my badge number?");
    const stranger = await turnInNewSession(await person("org-b", "recall-owen"), "What is my badge number?");
    const own = await turnInNewSession(owner, "What is my badge number?");

    expect([sectionOf(colleague.sent), sectionOf(stranger.sent)]).toEqual([null, null]);
    expect(sectionOf(own.sent)).toContain("Owen's badge number is 4471.");
  });

  it("leaves a memory forgotten with memory_forget out of the next prompt", async () => {
    const key = await person("org-a", "recall-fern", ["chat", "admin"]);
    // The general mode offers saving and searching; forgetting is a mode's choice.
    await ok("PUT", "/admin/modes/recall_forgetful", key, {
      displayName: "Forgetful",
      description: "Forgets on request.",
      systemPrompt: "Help.",
      tools: ["memory_forget"],
    });
    const { memory } = await new MemoryStore(env.DB, "org-a", "recall-fern").save({
      text: "Fern is allergic to peanuts.",
      source: null,
    });
    const forgot = await turnInNewSession(
      key,
      "Forget my allergy.",
      [toolCall("memory_forget", { id: memory.id }), { type: "completion", content: "Forgotten." }],
      "recall_forgetful",
    );
    expect(forgot.response.toolCalls[0]?.wasExecuted).toBe(true);
    expect(sectionOf(forgot.sent)).toContain(memory.id);

    const next = await turnInNewSession(key, "Any allergies I told you about?");
    expect(sectionOf(next.sent)).toBeNull();
  });

  it("leaves a memory deleted with DELETE /context/memories/:id out of the next prompt", async () => {
    const key = await person("org-a", "recall-gus");
    const store = new MemoryStore(env.DB, "org-a", "recall-gus");
    const kept = (await store.save({ text: "Gus works in Lisbon.", source: null })).memory;
    const gone = (await store.save({ text: "Gus drives a red bicycle.", source: null })).memory;
    await ok("DELETE", `/context/memories/${gone.id}`, key);

    const next = await turnInNewSession(key, "Where do I work?");
    expect(sectionOf(next.sent)?.split("\n").slice(2)).toEqual([`- [${kept.id}] Gus works in Lisbon.`]);
  });

  it("keeps the section within its budget with 1,000 memories, the pinned ones first, each memory whole", async () => {
    const key = await person("org-a", "recall-hal");
    const texts = new Map<string, string>();
    const rows = Array.from({ length: 1000 }, (_, n) => {
      const id = newMemoryId();
      const text = `Fact ${n} about Hal: ${"he likes quiet rooms and long walks ".repeat(1 + (n % 5))}`.trim();
      texts.set(id, text);
      return env.DB.prepare(
        "INSERT INTO memories (id, org, user_id, scope, text, pinned, created_by, created_at, updated_at) VALUES (?, 'org-a', 'recall-hal', 'user', ?, ?, 'recall-hal', ?, ?)",
      ).bind(
        id,
        text,
        n % 100 === 0 ? 1 : 0,
        new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
        "2026-01-02T00:00:00.000Z",
      );
    });
    await env.DB.batch(rows);

    const { sent } = await turnInNewSession(key, "Which rooms do I like?");
    const section = sectionOf(sent) ?? "";
    expect(estimateTokens(section)).toBeLessThanOrEqual(memorySectionBudget(settings(env).agent.promptBudgetTokens));
    const lines = section.split("\n").slice(2);
    expect(lines.slice(0, 10).every((line) => line.includes("] (pinned) "))).toBe(true);
    expect(lines.slice(10).some((line) => line.includes("(pinned)"))).toBe(false);
    for (const line of lines) {
      const [, id, text] = /^- \[(mem_\w+)\](?: \(pinned\))? (.*)$/.exec(line) ?? [];
      expect(text).toBe(texts.get(id ?? ""));
    }
  });

  it("sends the same system prompt on two turns, whatever their messages, while the memories do not change", async () => {
    const key = await person("org-a", "recall-ivy");
    const store = new MemoryStore(env.DB, "org-a", "recall-ivy");
    for (const text of ["Ivy's team is Platform.", "Ivy prefers short answers.", "Ivy lives in Oslo."]) {
      await store.save({ text, source: null });
    }
    const one = await turnInNewSession(key, "Which team am I on?");
    const two = await turnInNewSession(key, "Tell me about Oslo's weather.");
    expect(sectionOf(one.sent)).not.toBeNull();
    expect(systemOf(two.sent)).toBe(systemOf(one.sent));
  });

  it("has no section, offers no memory tool and stores nothing when the org has memory off", async () => {
    const key = await person("org-b", "recall-jon", ["chat", "admin"]);
    const store = new MemoryStore(env.DB, "org-b", "recall-jon");
    await store.save({ text: "Jon's favourite editor is Helix.", source: null });
    await ok("PUT", "/admin/memory", key, { enabled: false });

    const { sent, response } = await turnInNewSession(key, "Remember that my favourite colour is red.", [
      toolCall("memory_save", { text: "Jon's favourite colour is red." }),
      { type: "completion", content: "I cannot." },
    ]);
    await ok("PUT", "/admin/memory", key, { enabled: true });

    expect(sectionOf(sent)).toBeNull();
    expect(toolsOf(sent).filter((t) => MEMORY_TOOL_NAMES.includes(t))).toEqual([]);
    expect(response.toolCalls[0]?.wasExecuted).toBe(false);
    expect((await store.list({ limit: 10 })).memories.map((m) => m.text)).toEqual(["Jon's favourite editor is Helix."]);
  });

  it("has no section, offers no memory tool and stores nothing in a mode with memory off", async () => {
    const key = await person("org-a", "recall-kim", ["chat", "admin"]);
    await ok("PUT", "/admin/modes/recall_no_memory", key, {
      displayName: "No memory",
      description: "A mode that keeps nothing.",
      systemPrompt: "Help without remembering.",
      tools: ["agent_hello_world", "memory_save", "memory_search"],
      memory: false,
    });
    const store = new MemoryStore(env.DB, "org-a", "recall-kim");
    await store.save({ text: "Kim's favourite editor is Zed.", source: null });

    const { sent, response } = await turnInNewSession(
      key,
      "Remember that my favourite colour is blue.",
      [toolCall("memory_save", { text: "Kim's favourite colour is blue." }), { type: "completion", content: "No." }],
      "recall_no_memory",
    );
    expect(sectionOf(sent)).toBeNull();
    expect(toolsOf(sent)).toEqual(["agent_change_mode", "agent_list_modes", "agent_hello_world"]);
    expect(response.toolCalls[0]?.wasExecuted).toBe(false);
    expect((await store.list({ limit: 10 })).memories.map((m) => m.text)).toEqual(["Kim's favourite editor is Zed."]);
  });

  it("shows on the enhanced system prompt endpoint what the caller's turn would see", async () => {
    const key = await person("org-a", "recall-lea", ["chat", "admin"]);
    const { memory } = await new MemoryStore(env.DB, "org-a", "recall-lea").save({
      text: "Lea writes in British English.",
      source: null,
      pinned: true,
    });
    await ok("PUT", "/admin/modes/recall_lea_off", key, {
      displayName: "Lea off",
      description: "No memory.",
      systemPrompt: "Help.",
      tools: ["memory_save"],
      memory: false,
    });
    type Enhanced = { prompt: string; tools: string[] };
    const on = (await ok("GET", "/v1/system-prompts/default/enhanced", key)) as Enhanced;
    const off = (await ok("GET", "/v1/system-prompts/default/enhanced?mode=recall_lea_off", key)) as Enhanced;

    expect(on.prompt.trimEnd().split("\n").at(-1)).toBe(`- [${memory.id}] (pinned) Lea writes in British English.`);
    expect(on.tools).toEqual(expect.arrayContaining(["memory_save", "memory_search"]));
    expect([off.prompt.includes(MEMORY_SECTION_HEADING), off.tools.includes("memory_save")]).toEqual([false, false]);
  });
});

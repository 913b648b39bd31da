// memory_save, memory_search and memory_forget through their AgentTool values, over the real D1: they act for the
// context's person, record the session and turn as a save's source, and refuse when memory is off.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { memoryAccess } from "../../src/memory/memory-access";
import { forgetOrgMemoryPolicy, MEMORY_TOOL_NAMES, orgMemoryStatement } from "../../src/memory/memory-policy";
import { MemoryStore } from "../../src/memory/memory-store";
import { D1AgentModeCatalogService, upsertMode } from "../../src/modes/catalog-service";
import type { AgentTool, InvokeResult } from "../../src/tools/contract";
import { createProductionTools } from "../../src/tools/index";
import { MEMORY_FORGET_TOOL_NAME } from "../../src/tools/memory-forget";
import { MEMORY_SAVE_TOOL_NAME } from "../../src/tools/memory-save";
import { MEMORY_SEARCH_TOOL_NAME } from "../../src/tools/memory-search";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { RecordingSessionManager, toolContext } from "../fixtures/tool-context";

let orgs = 0;
function setup() {
  const org = `org-tools-${++orgs}`;
  const catalog = new D1AgentModeCatalogService(env.DB, org);
  const tools = createProductionTools({
    logger: new RecordingAdminLogger(),
    sessionManager: new RecordingSessionManager(),
    catalog,
    memory: memoryAccess(env, env.DB),
  });
  const tool = (name: string): AgentTool => {
    const found = tools.find((t) => t.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  const context = toolContext({ org, user: "alice", sessionId: "sess-1", turnId: "turn-1", mode: "general" });
  const call = (name: string, args: object, overrides: Partial<typeof context> = {}) =>
    tool(name).execute(JSON.stringify(args), { ...context, ...overrides });
  return { org, call, alice: new MemoryStore(env.DB, org, "alice"), bob: new MemoryStore(env.DB, org, "bob") };
}

function resultOf(result: InvokeResult<string>): unknown {
  expect(result.errorMessage).toBeUndefined();
  return JSON.parse(result.result ?? "null");
}

describe("memory_save", () => {
  it("saves for the context's person with the session and turn as its source", async () => {
    const { call, alice, bob } = setup();
    const saved = resultOf(await call(MEMORY_SAVE_TOOL_NAME, { text: "Prefers answers in French" }));
    expect(saved).toMatchObject({
      outcome: "added",
      previous: null,
      memory: { text: "Prefers answers in French", scope: "user", source: { sessionId: "sess-1", turnId: "turn-1" } },
    });
    expect((await alice.list({ limit: 5 })).memories).toHaveLength(1);
    expect((await bob.list({ limit: 5 })).memories).toEqual([]);
  });

  it("updates the memory a repeat names in replaces, with its previous text", async () => {
    const { call, alice } = setup();
    const first = await alice.save({ text: "Works at Initech", source: null });
    const saved = resultOf(
      await call(MEMORY_SAVE_TOOL_NAME, { text: "Works at Globex now", replaces: first.memory.id }),
    );
    expect(saved).toMatchObject({ outcome: "updated", previous: "Works at Initech", memory: { id: first.memory.id } });
  });

  it("refuses over-long text, naming the field, and saves nothing", async () => {
    const { call, alice } = setup();
    const result = await call(MEMORY_SAVE_TOOL_NAME, { text: "x".repeat(501) });
    expect(result.successful).toBe(false);
    expect(result.errorMessage).toBe("MemorySaveTool: Invalid 'text': must be at most 500 characters.");
    expect((await alice.list({ limit: 5 })).memories).toEqual([]);
  });
});

describe("memory_search", () => {
  it("finds the person's memories by words and not another person's", async () => {
    const { call, alice, bob } = setup();
    await alice.save({ text: "Favourite editor is Helix", source: null });
    await bob.save({ text: "Favourite editor is Emacs", source: null });
    const found = resultOf(await call(MEMORY_SEARCH_TOOL_NAME, { query: "editor" }));
    expect(found).toEqual({ memories: [expect.objectContaining({ text: "Favourite editor is Helix" })] });
  });

  it("refuses an empty query", async () => {
    const { call } = setup();
    const result = await call(MEMORY_SEARCH_TOOL_NAME, { query: "  " });
    expect(result.errorMessage).toBe("MemorySearchTool requires 'query' to be a non-empty string.");
  });
});

describe("memory_forget", () => {
  it("forgets one memory by id", async () => {
    const { call, alice } = setup();
    const saved = await alice.save({ text: "Allergic to peanuts", source: null });
    const result = resultOf(await call(MEMORY_FORGET_TOOL_NAME, { id: saved.memory.id }));
    expect(result).toEqual({ forgotten: [{ id: saved.memory.id, text: "Allergic to peanuts" }] });
    expect(await alice.get(saved.memory.id)).toBeNull();
  });

  it("forgets the person's memories with every word of a query and no others", async () => {
    const { call, alice } = setup();
    await alice.save({ text: "Has a peanut allergy", source: null });
    const kept = await alice.save({ text: "Likes peanut butter cookies", source: null });
    const result = resultOf(await call(MEMORY_FORGET_TOOL_NAME, { query: "peanut allergy" }));
    expect(result).toEqual({ forgotten: [expect.objectContaining({ text: "Has a peanut allergy" })] });
    expect((await alice.list({ limit: 5 })).memories.map((m) => m.id)).toEqual([kept.memory.id]);
  });

  it("refuses another person's memory id and changes nothing", async () => {
    const { call, bob } = setup();
    const bobs = await bob.save({ text: "Bob's birthday is in May", source: null });
    const result = await call(MEMORY_FORGET_TOOL_NAME, { id: bobs.memory.id });
    expect(result.successful).toBe(false);
    expect(await bob.get(bobs.memory.id)).not.toBeNull();
  });

  it("refuses neither or both of id and query", async () => {
    const { call } = setup();
    expect((await call(MEMORY_FORGET_TOOL_NAME, {})).errorMessage).toBe(
      "MemoryForgetTool requires exactly one of 'id' or 'query'.",
    );
    expect((await call(MEMORY_FORGET_TOOL_NAME, { id: "mem_1", query: "x" })).errorMessage).toBe(
      "MemoryForgetTool requires exactly one of 'id' or 'query'.",
    );
  });
});

describe("policy", () => {
  it("refuses every memory tool when the org's memory is off, and stores nothing", async () => {
    const { org, call, alice } = setup();
    await orgMemoryStatement(env.DB, org, false).run();
    forgetOrgMemoryPolicy(env.DB);
    for (const [name, args] of [
      [MEMORY_SAVE_TOOL_NAME, { text: "Lives in Oslo" }],
      [MEMORY_SEARCH_TOOL_NAME, { query: "Oslo" }],
      [MEMORY_FORGET_TOOL_NAME, { query: "Oslo" }],
    ] as const) {
      expect((await call(name, args)).errorMessage).toBe("Memory is off for this organization.");
    }
    expect((await alice.list({ limit: 5 })).memories).toEqual([]);
  });

  it("refuses in a mode whose memory is off", async () => {
    const { org, call, alice } = setup();
    await upsertMode(env.DB, org, "quiet", {
      displayName: "Quiet",
      description: "No memory.",
      systemPromptSummary: "",
      systemPrompt: "Be brief.",
      isDefault: false,
      humanRoleHints: null,
      exampleUtterances: null,
      tools: ["memory_save"],
      approvalRequiredTools: [],
      modelRoute: "default",
      memory: false,
    });
    const result = await call(MEMORY_SAVE_TOOL_NAME, { text: "Lives in Oslo" }, { mode: "quiet" });
    expect(result.errorMessage).toBe("Memory is off for this mode.");
    expect((await alice.list({ limit: 5 })).memories).toEqual([]);
  });

  it("lists the tool names the memory tools register under among MEMORY_TOOL_NAMES", () => {
    expect(MEMORY_TOOL_NAMES).toEqual([
      MEMORY_SAVE_TOOL_NAME,
      MEMORY_SEARCH_TOOL_NAME,
      MEMORY_FORGET_TOOL_NAME,
      "conversation_search",
    ]);
  });
});

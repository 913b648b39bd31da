// MemoryStore against the real D1 (migrations/0031_memories.sql): what a person sees, a save that repeats or
// corrects a memory updating it, the limits, paging, search and recall's order.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MemoryProblem, MemoryStore } from "../../src/memory/memory-store";

let orgs = 0;
/** A store for a person of a fresh org (the file's tests share one database). */
function stores(options: { maxPerUser?: number } = {}) {
  const org = `org-mem-${++orgs}`;
  return {
    org,
    alice: new MemoryStore(env.DB, org, "alice", options),
    bob: new MemoryStore(env.DB, org, "bob", options),
    admin: new MemoryStore(env.DB, org, "ada", { ...options, admin: true }),
  };
}

const source = { sessionId: "s-1", turnId: "t-1" };

async function refusal(work: Promise<unknown>): Promise<{ code: string; param: string | null; message: string }> {
  try {
    await work;
  } catch (error) {
    if (error instanceof MemoryProblem) return { code: error.code, param: error.param, message: error.message };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("saving", () => {
  it("adds a memory with its text trimmed and its source", async () => {
    const { alice } = stores();
    const saved = await alice.save({ text: "  I live in Lyon.  ", source });
    expect(saved).toMatchObject({ outcome: "added", previous: null });
    expect(saved.memory).toMatchObject({ text: "I live in Lyon.", scope: "user", source, pinned: false });
    expect(saved.memory.id).toMatch(/^mem_[0-9a-f]{32}$/);
    expect(await alice.get(saved.memory.id)).toEqual(saved.memory);
  });

  it("updates the memory of the same normalised text instead of adding one", async () => {
    const { alice } = stores();
    const first = await alice.save({ text: "I live in Lyon.", source: null });
    const again = await alice.save({ text: "i live in lyon", source });
    expect(again).toMatchObject({ outcome: "updated", previous: "I live in Lyon." });
    expect(again.memory.id).toBe(first.memory.id);
    expect(again.memory.source).toEqual(source);
    expect((await alice.list({ limit: 10 })).memories).toHaveLength(1);
  });

  it("updates a memory whose content words overlap strongly", async () => {
    const { alice } = stores();
    const first = await alice.save({ text: "I like green tea in the morning", source: null });
    const again = await alice.save({ text: "I really like green tea every morning", source: null });
    expect(again).toMatchObject({ outcome: "updated", previous: "I like green tea in the morning" });
    expect(again.memory.id).toBe(first.memory.id);
  });

  it("updates a memory stating the same subject with another value", async () => {
    const { alice } = stores();
    const first = await alice.save({ text: "My favourite colour is blue", source: null });
    const again = await alice.save({ text: "My favourite colour is green.", source: null });
    expect(again).toMatchObject({ outcome: "updated", previous: "My favourite colour is blue" });
    expect(again.memory).toMatchObject({ id: first.memory.id, text: "My favourite colour is green." });
  });

  it("updates the memory a save names in replaces", async () => {
    const { alice } = stores();
    const first = await alice.save({ text: "Works at Initech", source: null });
    const again = await alice.save({ text: "Moved to Globex last spring", source: null, replaces: first.memory.id });
    expect(again).toMatchObject({ outcome: "updated", previous: "Works at Initech" });
    expect(again.memory.id).toBe(first.memory.id);
  });

  it("adds a fact of its own beside unrelated ones", async () => {
    const { alice } = stores();
    await alice.save({ text: "My favourite colour is blue", source: null });
    const other = await alice.save({ text: "My favourite food is ramen", source: null });
    expect(other.outcome).toBe("added");
    expect((await alice.list({ limit: 10 })).memories).toHaveLength(2);
  });

  it("refuses replaces naming a memory the person does not have", async () => {
    const { alice, bob } = stores();
    const bobs = await bob.save({ text: "Bob's secret", source: null });
    expect(await refusal(alice.save({ text: "x y z", source: null, replaces: bobs.memory.id }))).toMatchObject({
      code: "memory_not_found",
      param: "replaces",
    });
    expect((await bob.get(bobs.memory.id))?.text).toBe("Bob's secret");
  });

  it("refuses text that is empty or over 500 characters, naming the field", async () => {
    const { alice } = stores();
    expect(await refusal(alice.save({ text: "   ", source: null }))).toMatchObject({
      code: "invalid_request",
      param: "text",
    });
    const long = await refusal(alice.save({ text: "a".repeat(501), source: null }));
    expect(long).toMatchObject({ code: "invalid_request", param: "text" });
    expect(long.message).toContain("500");
    expect((await alice.list({ limit: 10 })).memories).toEqual([]);
  });

  it("refuses a save beyond the person's limit and adds nothing", async () => {
    const { alice } = stores({ maxPerUser: 2 });
    await alice.save({ text: "One fact about cats", source: null });
    await alice.save({ text: "Another about dogs", source: null });
    expect((await refusal(alice.save({ text: "Third about birds", source: null }))).code).toBe("memory_limit_reached");
    expect((await alice.list({ limit: 10 })).memories).toHaveLength(2);
  });

  it("refuses an org memory from a member, and takes one from an admin", async () => {
    const { alice, admin } = stores();
    expect(await refusal(alice.save({ text: "The office is in Lyon", source: null, scope: "org" }))).toMatchObject({
      code: "insufficient_scope",
    });
    const saved = await admin.save({ text: "The office is in Lyon", source: null, scope: "org" });
    expect(saved.memory.scope).toBe("org");
  });
});

describe("who sees what", () => {
  it("shows a person their own memories and their org's, never another person's", async () => {
    const { alice, bob, admin } = stores();
    const own = await alice.save({ text: "Alice plays the cello", source: null });
    const bobs = await bob.save({ text: "Bob plays the drums", source: null });
    const orgs = await admin.save({ text: "Fridays are remote", source: null, scope: "org" });
    const seen = (await alice.list({ limit: 10 })).memories.map((m) => m.id).sort();
    expect(seen).toEqual([own.memory.id, orgs.memory.id].sort());
    expect(await alice.get(bobs.memory.id)).toBeNull();
    expect(await alice.update(bobs.memory.id, { text: "changed" })).toBeNull();
    expect(await alice.remove(bobs.memory.id)).toBeNull();
    expect((await bob.get(bobs.memory.id))?.text).toBe("Bob plays the drums");
  });

  it("hides another org's memories of a person of the same name", async () => {
    const one = stores();
    const two = stores();
    const saved = await one.alice.save({ text: "Alice of org one", source: null });
    expect(await two.alice.get(saved.memory.id)).toBeNull();
    expect((await two.alice.list({ limit: 10 })).memories).toEqual([]);
  });

  it("lets an admin change an org memory and refuses a member", async () => {
    const { alice, admin } = stores();
    const orgs = await admin.save({ text: "Fridays are remote", source: null, scope: "org" });
    expect((await refusal(alice.update(orgs.memory.id, { pinned: true }))).code).toBe("insufficient_scope");
    expect((await refusal(alice.remove(orgs.memory.id))).code).toBe("insufficient_scope");
    expect(await admin.update(orgs.memory.id, { pinned: true })).toMatchObject({ pinned: true });
  });

  it("forgets all of the person's own and none of the org's or another person's", async () => {
    const { alice, bob, admin } = stores();
    await alice.save({ text: "Alice plays the cello", source: null });
    await alice.save({ text: "Alice lives in Lyon", source: null });
    await bob.save({ text: "Bob plays the drums", source: null });
    await admin.save({ text: "Fridays are remote", source: null, scope: "org" });
    expect(await alice.removeAll()).toBe(2);
    expect((await alice.list({ limit: 10 })).memories.map((m) => m.scope)).toEqual(["org"]);
    expect((await bob.list({ limit: 10 })).memories).toHaveLength(2);
  });
});

describe("changing", () => {
  it("corrects and pins a memory, keeping its id and creation time", async () => {
    const { alice } = stores();
    const saved = await alice.save({ text: "Lives in Lyon", source });
    const changed = await alice.update(saved.memory.id, { text: "Lives in Lille", pinned: true });
    expect(changed).toMatchObject({ id: saved.memory.id, text: "Lives in Lille", pinned: true, source });
    expect(changed?.createdAt).toBe(saved.memory.createdAt);
    expect((await alice.search("Lille", 5)).map((m) => m.id)).toEqual([saved.memory.id]);
    expect(await alice.search("Lyon", 5)).toEqual([]);
  });

  it("removes a memory from storage and from search", async () => {
    const { alice } = stores();
    const saved = await alice.save({ text: "Allergic to peanuts", source: null });
    expect((await alice.remove(saved.memory.id))?.id).toBe(saved.memory.id);
    expect(await alice.get(saved.memory.id)).toBeNull();
    expect(await alice.search("peanuts", 5)).toEqual([]);
  });
});

describe("reading", () => {
  it("pages the list newest first with a cursor", async () => {
    let clock = Date.parse("2026-11-01T00:00:00Z");
    const org = `org-mem-${++orgs}`;
    const alice = new MemoryStore(env.DB, org, "alice", { now: () => (clock += 1000) });
    const texts = ["apples grow", "bananas ripen", "cherries fall", "dates dry", "elderberries brew"];
    for (const text of texts) await alice.save({ text, source: null });
    const first = await alice.list({ limit: 2 });
    expect(first.memories.map((m) => m.text)).toEqual(["elderberries brew", "dates dry"]);
    const second = await alice.list({ limit: 2, cursor: first.nextCursor ?? "" });
    expect(second.memories.map((m) => m.text)).toEqual(["cherries fall", "bananas ripen"]);
    const third = await alice.list({ limit: 2, cursor: second.nextCursor ?? "" });
    expect(third).toEqual({ memories: [expect.objectContaining({ text: "apples grow" })], nextCursor: null });
  });

  it("finds memories with every word of q, stemmed", async () => {
    const { alice } = stores();
    await alice.save({ text: "My favourite colours are teal and orange", source: null });
    await alice.save({ text: "The colour of my car is red", source: null });
    const found = await alice.list({ q: "favourite colour", limit: 10 });
    expect(found.memories.map((m) => m.text)).toEqual(["My favourite colours are teal and orange"]);
  });

  it("refuses a q or a cursor it cannot read, naming it", async () => {
    const { alice } = stores();
    expect(await refusal(alice.list({ q: "?!", limit: 10 }))).toMatchObject({ code: "invalid_request", param: "q" });
    expect(await refusal(alice.list({ limit: 10, cursor: "not-ours" }))).toMatchObject({ param: "cursor" });
  });

  it("searches by any word, best match first", async () => {
    const { alice } = stores();
    await alice.save({ text: "Uses TypeScript at work", source: null });
    await alice.save({ text: "Writes TypeScript and Rust at work on Workers", source: null });
    await alice.save({ text: "Has two cats", source: null });
    const found = await alice.search("rust workers typescript", 5);
    expect(found.map((m) => m.text)).toEqual([
      "Writes TypeScript and Rust at work on Workers",
      "Uses TypeScript at work",
    ]);
  });

  it("recalls pinned memories first, then the relevant, then the newest, within the limit", async () => {
    let clock = Date.parse("2026-11-01T00:00:00Z");
    const org = `org-mem-${++orgs}`;
    const alice = new MemoryStore(env.DB, org, "alice", { now: () => (clock += 1000) });
    const admin = new MemoryStore(env.DB, org, "ada", { admin: true, now: () => (clock += 1000) });
    await alice.save({ text: "Name is Alice Martin", source: null, pinned: true });
    await alice.save({ text: "Owns a bicycle shop", source: null });
    await admin.save({ text: "Deploys happen on Tuesdays", source: null, scope: "org" });
    await alice.save({ text: "Plays chess on weekends", source: null });
    await alice.save({ text: "Drinks coffee black", source: null });
    const recalled = await alice.recall("When do deploys happen?", 3);
    expect(recalled.map((m) => m.text)).toEqual([
      "Name is Alice Martin",
      "Deploys happen on Tuesdays",
      "Drinks coffee black",
    ]);
    expect(await alice.recall("anything", 0)).toEqual([]);
  });
});

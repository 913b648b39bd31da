// /context/memories and /admin/memory through the Worker: who may read and change which memory (another person's or
// another org's is 404 and unchanged; org memories are every member's to read and an admin's to write), bad input
// named and changing nothing, the org's switch (audited), and a person's export and forgetting.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetOrgMemoryPolicy } from "../../src/memory/memory-policy";
import { TEST_KEYS } from "../fixtures/keys";
import { callAs } from "../fixtures/sessions";

const ADMIN = TEST_KEYS.admin.key;
const BOB = TEST_KEYS.chat.key;
const CAROL = TEST_KEYS.otherMember.key;
const MALLORY = TEST_KEYS.otherOrg.key;

const call = callAs;

interface MemoryJson {
  id: string;
  text: string;
  scope: string;
  pinned: boolean;
}

async function add(key: string, text: string, extra: object = {}): Promise<MemoryJson> {
  const created = await call(key, "POST", "/context/memories", { text, ...extra });
  expect(created.status).toBe(201);
  return created.body as unknown as MemoryJson;
}

async function textsOf(key: string): Promise<string[]> {
  const page = await call(key, "GET", "/context/memories?limit=100");
  return (page.body.memories as MemoryJson[]).map((m) => m.text).sort();
}

const errorOf = (answer: { body: Record<string, unknown> }) =>
  answer.body.error as { code: string; param: string | null; message: string };

describe("a person's memories", () => {
  it("adds, lists, corrects, pins and forgets one", async () => {
    const made = await add(BOB, "Bob keeps bees");
    expect(made).toMatchObject({ text: "Bob keeps bees", scope: "user", pinned: false, source: null });
    const patched = await call(BOB, "PATCH", `/context/memories/${made.id}`, {
      text: "Bob keeps two hives",
      pinned: true,
    });
    expect(patched).toMatchObject({ status: 200, body: { id: made.id, text: "Bob keeps two hives", pinned: true } });
    expect((await call(BOB, "GET", "/context/memories?q=hives")).body.memories).toEqual([patched.body]);
    expect((await call(BOB, "DELETE", `/context/memories/${made.id}`)).status).toBe(204);
    expect((await call(BOB, "GET", `/context/memories/${made.id}`)).status).toBe(404);
  });

  it("answers another person's memory id with 404 on GET, PATCH and DELETE, and changes nothing", async () => {
    const bobs = await add(BOB, "Bob's locker code is private");
    for (const [method, body] of [["GET"], ["PATCH", { text: "changed" }], ["DELETE"]] as const) {
      for (const key of [CAROL, ADMIN, MALLORY]) {
        const answer = await call(key, method, `/context/memories/${bobs.id}`, body);
        expect(answer.status).toBe(404);
        expect(errorOf(answer).code).toBe("memory_not_found");
      }
    }
    expect((await call(BOB, "GET", `/context/memories/${bobs.id}`)).body).toMatchObject({
      text: "Bob's locker code is private",
    });
  });

  it("refuses empty and over-long text naming the field, and stores nothing", async () => {
    const before = await textsOf(CAROL);
    const empty = await call(CAROL, "POST", "/context/memories", { text: "  " });
    expect(empty.status).toBe(400);
    expect(errorOf(empty)).toMatchObject({ code: "invalid_request", param: "text" });
    const long = await call(CAROL, "POST", "/context/memories", { text: "x".repeat(501) });
    expect(long.status).toBe(400);
    expect(errorOf(long).param).toBe("text");
    expect(errorOf(long).message).toContain("500");
    expect(await textsOf(CAROL)).toEqual(before);
  });

  it("refuses a PATCH that changes nothing, naming it", async () => {
    const made = await add(CAROL, "Carol runs marathons");
    const answer = await call(CAROL, "PATCH", `/context/memories/${made.id}`, {});
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe("invalid_request");
  });

  it("forgets all of the caller's own memories and nobody else's", async () => {
    await add(MALLORY, "Mallory likes puzzles");
    const carolsBefore = await textsOf(CAROL);
    await add(MALLORY, "Mallory drinks tea");
    const deleted = await call(MALLORY, "DELETE", "/context/memories");
    expect(deleted).toEqual({ status: 200, body: { deleted: 2 } });
    expect(await textsOf(MALLORY)).toEqual([]);
    expect(await textsOf(CAROL)).toEqual(carolsBefore);
  });
});

describe("org memories", () => {
  it("refuses a member writing one (403), takes an admin's, and shows it to every member of the org only", async () => {
    const refused = await call(BOB, "POST", "/context/memories", { text: "The VPN is Wireguard", scope: "org" });
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe("insufficient_scope");
    const made = await add(ADMIN, "The VPN is Wireguard", { scope: "org" });
    expect(made.scope).toBe("org");
    expect((await call(BOB, "GET", `/context/memories/${made.id}`)).status).toBe(200);
    expect((await call(CAROL, "GET", `/context/memories/${made.id}`)).status).toBe(200);
    expect((await call(MALLORY, "GET", `/context/memories/${made.id}`)).status).toBe(404);
    expect((await call(BOB, "PATCH", `/context/memories/${made.id}`, { pinned: true })).status).toBe(403);
    expect((await call(BOB, "DELETE", `/context/memories/${made.id}`)).status).toBe(403);
    expect((await call(ADMIN, "PATCH", `/context/memories/${made.id}`, { pinned: true })).body).toMatchObject({
      pinned: true,
    });
  });
});

describe("the org's switch", () => {
  it("turns memory off (audited): POST is refused with 409, reading and forgetting still work", async () => {
    const kept = await add(BOB, "Bob's bike is blue");
    expect(await call(MALLORY, "GET", "/admin/memory")).toEqual({ status: 200, body: { enabled: true } });
    expect(await call(MALLORY, "PUT", "/admin/memory", { enabled: false })).toEqual({
      status: 200,
      body: { enabled: false },
    });
    // Mallory's org is off; Bob's is not.
    const refused = await call(MALLORY, "POST", "/context/memories", { text: "Mallory has a cat" });
    expect(refused.status).toBe(409);
    expect(errorOf(refused).code).toBe("memory_disabled");
    expect((await call(BOB, "GET", `/context/memories/${kept.id}`)).status).toBe(200);
    const audit = await call(MALLORY, "GET", "/admin/audit?limit=5");
    expect((audit.body.entries as { action: string; after: unknown }[])[0]).toMatchObject({
      action: "memory.put",
      after: { enabled: false },
    });
    await call(MALLORY, "PUT", "/admin/memory", { enabled: true });
    forgetOrgMemoryPolicy(env.DB);
  });

  it("is a mode's too: the admin modes API writes and reads its memory flag", async () => {
    const mode = { displayName: "Quiet", description: "No memory here.", systemPrompt: "Be brief.", memory: false };
    const put = await call(ADMIN, "PUT", "/admin/modes/quiet", mode);
    expect(put.status).toBe(201);
    expect(put.body.mode).toMatchObject({ key: "quiet", memory: false });
    const listed = (await call(ADMIN, "GET", "/admin/modes")).body.modes as { key: string; memory: boolean }[];
    expect(listed.find((m) => m.key === "quiet")?.memory).toBe(false);
    expect(listed.find((m) => m.key === "general")?.memory).toBe(true);
  });

  it("is an admin's: a member is refused", async () => {
    expect((await call(BOB, "PUT", "/admin/memory", { enabled: false })).status).toBe(403);
    expect((await call(BOB, "GET", "/admin/memory")).status).toBe(403);
  });
});

describe("a person's data", () => {
  it("exports the caller's own memories, sessions, schedules and webhooks", async () => {
    await add(CAROL, "Carol speaks Portuguese");
    const session = await call(CAROL, "POST", "/context/sessions", {});
    const exported = await call(CAROL, "GET", "/context/export");
    expect(exported.status).toBe(200);
    expect(exported.body).toMatchObject({ user: { org: "org-a", id: "carol" }, schedules: [], webhooks: [] });
    expect((exported.body.memories as MemoryJson[]).map((m) => m.text)).toContain("Carol speaks Portuguese");
    expect((exported.body.sessions as { sessionId: string }[]).map((s) => s.sessionId)).toContain(
      session.body.sessionId,
    );
    expect(JSON.stringify(exported.body)).not.toContain("Bob");
  });

  it("forgets a person's memories when an admin disables them with forget", async () => {
    await add(CAROL, "Carol's cat is called Miso");
    const orgs = await add(ADMIN, "Standup is at nine", { scope: "org" });
    const carols = () =>
      env.DB.prepare("SELECT COUNT(*) AS n FROM memories WHERE org = 'org-a' AND user_id = 'carol'").first("n");
    const count = await carols();
    expect(count).toBeGreaterThan(0);
    const changed = await call(ADMIN, "PATCH", `/admin/users/${TEST_KEYS.otherMember.user}`, {
      disabled: true,
      forget: true,
    });
    expect(changed).toMatchObject({ status: 200, body: { user: { disabled: true }, forgotten: { memories: count } } });
    expect(await carols()).toBe(0);
    expect((await call(ADMIN, "GET", `/context/memories/${orgs.id}`)).status).toBe(200);
    await call(ADMIN, "PATCH", `/admin/users/${TEST_KEYS.otherMember.user}`, { disabled: false });
  });

  it("refuses forget without disabling, naming it", async () => {
    const answer = await call(ADMIN, "PATCH", `/admin/users/${TEST_KEYS.otherMember.user}`, {
      disabled: false,
      forget: true,
    });
    expect(answer.status).toBe(400);
    expect(errorOf(answer).param).toBe("forget");
  });
});

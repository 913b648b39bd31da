// PATCH /context/sessions/:id and the list's filters: a person renames a session (the automatic title never
// replaces theirs) and archives it (left out of the list unless archived=true); q searches titles.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionList, SessionListEntry } from "../../src/wire/session";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { newUserKey, type TestKey } from "../passthrough/harness";

type List = typeof SessionList._output;
type Entry = typeof SessionListEntry._output;
type ErrorBody = { error: { message: string; type: string; code: string; param: string | null } };

async function as(key: string, method: string, path: string, body?: unknown) {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as unknown };
}

async function newSession(key: TestKey): Promise<string> {
  const { status, json } = await as(key.key, "POST", "/context/sessions", {});
  expect(status).toBe(201);
  return (json as { sessionId: string }).sessionId;
}

async function list(key: TestKey, query = ""): Promise<List> {
  const { status, json } = await as(key.key, "GET", `/context/sessions${query}`);
  expect(status).toBe(200);
  return json as List;
}

const patch = (key: TestKey, id: string, body: unknown) => as(key.key, "PATCH", `/context/sessions/${id}`, body);

/** Waits (the list is written off the reply path) until the session's entry matches. */
async function entryOnce(key: TestKey, id: string, match: (entry: Entry) => boolean): Promise<Entry | undefined> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const entry = (await list(key, "?limit=100")).sessions.find((s) => s.sessionId === id);
    if ((entry && match(entry)) || Date.now() > deadline) return entry;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("PATCH /context/sessions/:id", () => {
  it("renames a session: the list shows the person's title", async () => {
    const key = await newUserKey();
    const id = await newSession(key);
    const renamed = await patch(key, id, { title: "  Launch   plan " });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ sessionId: id, title: "Launch plan", titleSetByUser: true, archivedAt: null });
    expect((await list(key)).sessions[0]).toMatchObject({ sessionId: id, title: "Launch plan", titleSetByUser: true });
  });

  it("keeps a person's title when the session's first message would give it an automatic one", async () => {
    const key = await newUserKey();
    const id = await newSession(key);
    await patch(key, id, { title: "Mine" });
    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    const said = await as(key.key, "POST", `/context/sessions/${id}/messages`, { content: `first ${script.marker}` });
    expect(said.status).toBe(200);
    // The list's write after the turn (its status, its updated-at) lands; the title stays the person's.
    const entry = await entryOnce(key, id, (e) => e.updatedAt > e.createdAt && e.status === "idle");
    expect(entry).toMatchObject({ title: "Mine", titleSetByUser: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await list(key)).sessions[0]?.title).toBe("Mine");
  });

  it("gives the automatic title back with title: null", async () => {
    const key = await newUserKey();
    const id = await newSession(key);
    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    await as(key.key, "POST", `/context/sessions/${id}/messages`, { content: `Plan the launch ${script.marker}` });
    await patch(key, id, { title: "Mine" });
    const reset = await patch(key, id, { title: null });
    expect(reset.json).toMatchObject({ title: `Plan the launch ${script.marker}`, titleSetByUser: false });
  });

  it("archives a session: left out of the list, listed with archived=true, and back when unarchived", async () => {
    const key = await newUserKey();
    const kept = await newSession(key);
    const archived = await newSession(key);
    const answer = await patch(key, archived, { archived: true });
    expect(answer.status).toBe(200);
    expect(typeof (answer.json as Entry).archivedAt).toBe("string");
    expect((await list(key)).sessions.map((s) => s.sessionId)).toEqual([kept]);
    expect((await list(key, "?archived=true")).sessions.map((s) => s.sessionId)).toEqual([archived]);
    await patch(key, archived, { archived: false });
    expect((await list(key)).sessions.map((s) => s.sessionId).sort()).toEqual([kept, archived].sort());
    expect((await list(key, "?archived=true")).sessions).toEqual([]);
  });

  for (const [body, param] of [
    [{ title: "" }, "title"],
    [{ title: "x".repeat(81) }, "title"],
    [{ title: 7 }, "title"],
    [{ archived: "yes" }, "archived"],
    [{ colour: "blue" }, "colour"],
    [{}, null],
  ] as const) {
    it(`refuses ${JSON.stringify(body).slice(0, 40)} with 400 naming ${param ?? "the body"}, changing nothing`, async () => {
      const key = await newUserKey();
      const id = await newSession(key);
      await patch(key, id, { title: "Before" });
      const refused = await patch(key, id, body);
      expect(refused.status).toBe(400);
      expect((refused.json as ErrorBody).error).toMatchObject({ type: "invalid_request_error", param });
      expect((await list(key)).sessions[0]).toMatchObject({ title: "Before", archivedAt: null });
    });
  }

  it("answers another member of the org and another org the same 404, changing nothing", async () => {
    const key = await newUserKey();
    const id = await newSession(key);
    const colleague = await newUserKey();
    const forbidden = await patch(colleague, id, { title: "Theirs" });
    expect([forbidden.status, (forbidden.json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
    const stranger = await as(TEST_KEYS.otherOrg.key, "PATCH", `/context/sessions/${id}`, { title: "Theirs" });
    expect([stranger.status, (stranger.json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
    expect((await list(key)).sessions[0]?.title).toBeNull();
  });

  it("lets an admin of the org rename another user's session", async () => {
    const key = await newUserKey();
    const id = await newSession(key);
    const renamed = await as(TEST_KEYS.admin.key, "PATCH", `/context/sessions/${id}`, { title: "By the admin" });
    expect(renamed.status).toBe(200);
    expect((await list(key)).sessions[0]?.title).toBe("By the admin");
  });
});

describe("GET /context/sessions?q=", () => {
  it("lists the sessions whose title contains q, ignoring case", async () => {
    const key = await newUserKey();
    const [launch, budget, none] = [await newSession(key), await newSession(key), await newSession(key)];
    await patch(key, launch, { title: "Plan the LAUNCH" });
    await patch(key, budget, { title: "Budget review" });
    expect((await list(key, "?q=launch")).sessions.map((s) => s.sessionId)).toEqual([launch]);
    expect((await list(key, "?q=E")).sessions.map((s) => s.sessionId).sort()).toEqual([launch, budget].sort());
    expect((await list(key, "?q=zzz")).sessions).toEqual([]);
    expect((await list(key)).sessions.map((s) => s.sessionId)).toContain(none);
  });

  it("takes % and _ in q literally", async () => {
    const key = await newUserKey();
    const [percent, plain] = [await newSession(key), await newSession(key)];
    await patch(key, percent, { title: "100% done_now" });
    await patch(key, plain, { title: "100 percent done" });
    expect((await list(key, `?q=${encodeURIComponent("0%")}`)).sessions.map((s) => s.sessionId)).toEqual([percent]);
    expect((await list(key, "?q=e_n")).sessions.map((s) => s.sessionId)).toEqual([percent]);
  });

  it("refuses archived=maybe and an empty q, naming the parameter", async () => {
    const key = await newUserKey();
    for (const [query, param] of [
      ["?archived=maybe", "archived"],
      ["?q=", "q"],
    ]) {
      const refused = await as(key.key, "GET", `/context/sessions${query}`);
      expect([refused.status, (refused.json as ErrorBody).error.param]).toEqual([400, param]);
    }
  });
});

// POST /context/sessions/:id/branches: a person branches a conversation before one of their own messages (to edit
// it, or to have an answer again). The branch starts with the conversation before that message, records where it
// came from, and the source is never changed; bad branch points are refused, creating nothing.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BranchCreated, SessionList, SessionView } from "../../src/wire/session";
import { TEST_KEYS } from "../fixtures/keys";
import type { ErrorBody } from "../fixtures/sessions";
import { scriptUpstream, type UpstreamScript } from "../fixtures/upstream";
import { newUserKey, type TestKey } from "../passthrough/harness";

type Branch = typeof BranchCreated._output;
type List = typeof SessionList._output;

async function as(key: string, method: string, path: string, body?: unknown) {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as unknown };
}

async function view(key: TestKey, id: string): Promise<SessionView> {
  const { status, json } = await as(key.key, "GET", `/context/sessions/${id}`);
  expect(status).toBe(200);
  return json as SessionView;
}

async function list(key: TestKey, query = ""): Promise<List> {
  const { status, json } = await as(key.key, "GET", `/context/sessions${query}`);
  expect(status).toBe(200);
  return json as List;
}

const said = (v: SessionView) => v.conversation.map((m) => ({ role: m.role, kind: m.kind, content: m.content }));

/**
 * A conversation of two turns (seqs 1-4: question, answer, question, answer) in `mode`, its script with `more`
 * steps after them for the branch's turns.
 */
async function twoTurns(
  key: TestKey,
  more: { type: "completion"; content: string }[] = [],
  mode = "general",
): Promise<{ id: string; script: UpstreamScript }> {
  const script = await scriptUpstream([
    { type: "completion", content: "First answer." },
    { type: "completion", content: "Second answer." },
    ...more,
  ]);
  const created = await as(key.key, "POST", "/context/sessions", { mode });
  expect(created.status).toBe(201);
  const id = (created.json as { sessionId: string }).sessionId;
  for (const content of [`First question ${script.marker}`, "Second question"]) {
    const turn = await as(key.key, "POST", `/context/sessions/${id}/messages`, { content });
    expect(turn.status).toBe(200);
  }
  return { id, script };
}

const branch = (key: TestKey, id: string, body: unknown) =>
  as(key.key, "POST", `/context/sessions/${id}/branches`, body);

describe("POST /context/sessions/:id/branches", () => {
  it("starts the branch with the conversation before the message, in the source's mode", async () => {
    const key = await newUserKey();
    const { id, script } = await twoTurns(key, [], "workspace");
    const created = await branch(key, id, { beforeMessage: 3 });
    expect(created.status).toBe(201);
    const answer = created.json as Branch;
    expect(answer).toMatchObject({ mode: "workspace", status: "idle", branchOf: { sessionId: id, beforeMessage: 3 } });
    const branched = await view(key, answer.sessionId);
    expect(said(branched)).toEqual([
      { role: "user", kind: "message", content: `First question ${script.marker}` },
      { role: "assistant", kind: "answer", content: "First answer." },
    ]);
    expect(branched.branchOf).toEqual({ sessionId: id, beforeMessage: 3, seededThrough: 2 });
  });

  it("leaves the source as it was", async () => {
    const key = await newUserKey();
    const { id } = await twoTurns(key);
    const before = await view(key, id);
    expect((await branch(key, id, { beforeMessage: 3 })).status).toBe(201);
    const after = await view(key, id);
    expect(said(after)).toEqual(said(before));
    expect(after.branchOf).toBeNull();
  });

  it("sends the model the seeded conversation and the new message, not what came after the branch point", async () => {
    const key = await newUserKey();
    const { id, script } = await twoTurns(key, [{ type: "completion", content: "Another second answer." }]);
    const branchId = ((await branch(key, id, { beforeMessage: 3 })).json as Branch).sessionId;
    const turn = await as(key.key, "POST", `/context/sessions/${branchId}/messages`, { content: "Edited question" });
    expect(turn.status).toBe(200);
    const sent = (await script.messagesOf(2)).filter((m) => m.role !== "system").map((m) => m.content);
    expect(sent).toEqual([`First question ${script.marker}`, "First answer.", "Edited question"]);
    expect(said(await view(key, branchId)).at(-1)).toEqual({
      role: "assistant",
      kind: "answer",
      content: "Another second answer.",
    });
  });

  it("takes the mode it is given", async () => {
    const key = await newUserKey();
    const { id } = await twoTurns(key);
    const created = await branch(key, id, { beforeMessage: 1, mode: "workspace" });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      mode: "workspace",
      branchOf: { sessionId: id, beforeMessage: 1, seededThrough: 0 },
    });
  });

  it("lists the branch with branchOf, and lists a session's branches with ?branchOf=", async () => {
    const key = await newUserKey();
    const { id } = await twoTurns(key);
    const first = ((await branch(key, id, { beforeMessage: 3 })).json as Branch).sessionId;
    const second = ((await branch(key, id, { beforeMessage: 1 })).json as Branch).sessionId;
    const entries = (await list(key)).sessions;
    expect(entries.find((s) => s.sessionId === first)?.branchOf).toEqual({ sessionId: id, beforeMessage: 3 });
    expect(entries.find((s) => s.sessionId === id)?.branchOf).toBeNull();
    const branches = (await list(key, `?branchOf=${id}`)).sessions;
    expect(branches.map((s) => [s.sessionId, s.branchOf?.beforeMessage]).sort()).toEqual(
      [
        [first, 3],
        [second, 1],
      ].sort(),
    );
  });

  it("lists the branch with its source's title (its first message) before its own first turn", async () => {
    const key = await newUserKey();
    const { id, script } = await twoTurns(key);
    const branchId = ((await branch(key, id, { beforeMessage: 3 })).json as Branch).sessionId;
    const entry = (await list(key)).sessions.find((s) => s.sessionId === branchId);
    expect(entry?.title).toBe(`First question ${script.marker}`);
  });
});

describe("POST /context/sessions/:id/branches refuses", () => {
  for (const [name, beforeMessage, says] of [
    ["the agent's answer", 2, "Message 2 is the assistant's, not one of the user's own messages"],
    ["a message the session does not have", 99, "has no message 99"],
  ] as const) {
    it(`a branch before ${name}: 400 invalid_branch_point naming beforeMessage, creating nothing`, async () => {
      const key = await newUserKey();
      const { id } = await twoTurns(key);
      const refused = await branch(key, id, { beforeMessage });
      expect(refused.status).toBe(400);
      const { error } = refused.json as ErrorBody;
      expect(error).toMatchObject({
        type: "invalid_request_error",
        code: "invalid_branch_point",
        param: "beforeMessage",
      });
      expect(error.message).toContain(says);
      expect((await list(key)).sessions.map((s) => s.sessionId)).toEqual([id]);
    });
  }

  for (const [body, param] of [
    [{ beforeMessage: "3" }, "beforeMessage"],
    [{ beforeMessage: 0 }, "beforeMessage"],
    [{}, "beforeMessage"],
    [{ beforeMessage: 3, colour: "blue" }, "colour"],
    [{ beforeMessage: 3, mode: "astrology" }, "mode"],
  ] as const) {
    it(`a body ${JSON.stringify(body)}: 400 naming ${param}, creating nothing`, async () => {
      const key = await newUserKey();
      const { id } = await twoTurns(key);
      const refused = await branch(key, id, body);
      expect(refused.status).toBe(400);
      expect((refused.json as ErrorBody).error).toMatchObject({ type: "invalid_request_error", param });
      expect((await list(key)).sessions.map((s) => s.sessionId)).toEqual([id]);
    });
  }

  it("another org's session: 404 session_not_found, as for a session that does not exist", async () => {
    const key = await newUserKey();
    const { id } = await twoTurns(key);
    const refused = await as(TEST_KEYS.otherOrg.key, "POST", `/context/sessions/${id}/branches`, { beforeMessage: 3 });
    expect([refused.status, (refused.json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
  });

  it("another member's session of the same org: 404, as another org's, creating nothing", async () => {
    const key = await newUserKey();
    const { id } = await twoTurns(key);
    const colleague = await newUserKey();
    const refused = await branch(colleague, id, { beforeMessage: 3 });
    expect([refused.status, (refused.json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
    expect((await list(colleague)).sessions).toEqual([]);
  });
});

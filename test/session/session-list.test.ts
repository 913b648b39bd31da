// GET /context/sessions: the caller's own sessions, newest change first, paginated, with what the sidebar shows.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionList } from "../../src/wire/session";
import { scriptUpstream } from "../fixtures/upstream";
import { newUserKey, type TestKey } from "../passthrough/harness";

type List = typeof SessionList._output;

async function as(key: TestKey, method: string, path: string, body?: unknown) {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function newSession(key: TestKey, mode?: string): Promise<string> {
  const { status, json } = await as(key, "POST", "/context/sessions", mode ? { mode } : {});
  expect(status).toBe(201);
  return String(json.sessionId);
}

async function list(key: TestKey, query = ""): Promise<List> {
  const { status, json } = await as(key, "GET", `/context/sessions${query}`);
  expect(status).toBe(200);
  return json as unknown as List;
}

/** The list is written by each session just after it changes (off the reply path): wait for it to show `match`. */
async function listOnce(key: TestKey, match: (page: List) => boolean): Promise<List> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const page = await list(key);
    if (match(page) || Date.now() > deadline) return page;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("GET /context/sessions", () => {
  it("lists the caller's sessions newest first, with mode, status, title and updated-at", async () => {
    const key = await newUserKey();
    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    const first = await newSession(key);
    const second = await newSession(key, "workspace");
    const said = await as(key, "POST", `/context/sessions/${first}/messages`, {
      content: `Plan the   launch\nof the new API ${script.marker}`,
    });
    expect(said.status).toBe(200);

    const page = await listOnce(key, (p) => p.sessions[0]?.title !== null && p.sessions[0]?.title !== undefined);
    expect(page.sessions.map((s) => s.sessionId)).toEqual([first, second]);
    expect(page.sessions[0]).toMatchObject({
      mode: "general",
      status: "idle",
      waitingForUser: false,
      title: `Plan the launch of the new API ${script.marker}`,
    });
    expect(page.sessions[1]).toMatchObject({ mode: "workspace", status: "idle", title: null });
    const [changed, untouched] = page.sessions.map((s) => Date.parse(s.updatedAt));
    expect(changed).toBeGreaterThan(untouched ?? Number.POSITIVE_INFINITY);
    expect(page.nextCursor).toBeNull();
  });

  it("marks a session whose turn waits for approval as waiting for the user", async () => {
    const key = await newUserKey();
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [{ name: "workspace_write_file", arguments: '{"path":"notes.txt","content":"hi"}' }],
      },
    ]);
    const id = await newSession(key, "workspace");
    const said = await as(key, "POST", `/context/sessions/${id}/messages`, { content: `write ${script.marker}` });
    expect(said.json.status).toBe("awaiting_approval");

    const page = await listOnce(key, (p) => p.sessions[0]?.waitingForUser === true);
    expect(page.sessions[0]).toMatchObject({ sessionId: id, status: "awaiting_approval", waitingForUser: true });
  });

  it("pages with nextCursor until the last page", async () => {
    const key = await newUserKey();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await newSession(key));
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page: List = await list(key, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      pages.push(page.sessions.map((s) => s.sessionId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    // The pages together are the whole list in its order (sessions made in one millisecond tie on updated-at).
    const whole = (await list(key, "?limit=100")).sessions.map((s) => s.sessionId);
    expect(pages.flat()).toEqual(whole);
    expect([...whole].sort()).toEqual([...ids].sort());
  });

  it("shows only the caller's own sessions: another user's and another org's are not listed", async () => {
    const mine = await newUserKey("org-a");
    const colleague = await newUserKey("org-a");
    const stranger = await newUserKey("org-b");
    const own = await newSession(mine);
    await newSession(colleague);
    await newSession(stranger);
    expect((await list(mine)).sessions.map((s) => s.sessionId)).toEqual([own]);
  });

  it("refuses a cursor that is not one of the list's, naming the parameter", async () => {
    const key = await newUserKey();
    const { status, json } = await as(key, "GET", "/context/sessions?cursor=not-a-cursor");
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ code: "invalid_request", param: "cursor" });
  });

  it("refuses a page size above 100, naming the parameter", async () => {
    const key = await newUserKey();
    const { status, json } = await as(key, "GET", "/context/sessions?limit=101");
    expect(status).toBe(400);
    expect(json.error).toMatchObject({ code: "invalid_request", param: "limit" });
  });

  it("lists and pages a session whose row has no updated-at (written before the list's migration) by its creation", async () => {
    const key = await newUserKey();
    const recent = await newSession(key);
    const old = "0".repeat(63) + "1";
    await env.DB.prepare(
      `INSERT INTO session_index (session_id, org, user_id, mode, created_at, updated_at)
       SELECT ?, org, user_id, 'general', '2020-01-01T00:00:00.000Z', NULL FROM api_keys WHERE id = ?`,
    )
      .bind(old, key.keyId)
      .run();
    const first = await list(key, "?limit=1");
    const second = await list(key, `?limit=1&cursor=${encodeURIComponent(first.nextCursor ?? "")}`);
    expect([first.sessions[0]?.sessionId, second.sessions[0]?.sessionId]).toEqual([recent, old]);
    expect(second.sessions[0]?.updatedAt).toBe("2020-01-01T00:00:00.000Z");
  });
});

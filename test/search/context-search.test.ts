// GET /context/search: a person finds the messages of their own sessions (an org admin with all=true: the org's),
// ranked and paged, never another person's or another org's, never a deleted or expired session's; bad queries get
// a 400 naming `q` and never a 500.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MESSAGE_INDEX_CHARS } from "../../src/session/message-feed";
import { sessionStubOrNull } from "../../src/session/session-client";
import type { SearchPage } from "../../src/wire/search";
import { TEST_KEYS } from "../fixtures/keys";
import { call, type ErrorBody } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { newUserKey } from "../passthrough/harness";

type Page = typeof SearchPage._output;

/** A word no other test writes. */
const word = (stem: string) => `${stem}${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;

async function newSession(key: string): Promise<string> {
  const { status, json } = await call("POST", "/context/sessions", {}, key);
  expect(status).toBe(201);
  return (json as { sessionId: string }).sessionId;
}

/** Turns of `key`'s session: in each the person says the first text and the agent answers the second. */
async function turns(key: string, sessionId: string, ...exchanges: [string, string][]): Promise<void> {
  // One script for the session: the upstream follows the first marker of a request, the one of its history.
  const script = await scriptUpstream(
    exchanges.map(([, answer]) => ({ type: "completion" as const, content: answer })),
  );
  for (const [said] of exchanges) {
    const content = `${said} ${script.marker}`;
    expect((await call("POST", `/context/sessions/${sessionId}/messages`, { content }, key)).status).toBe(200);
  }
}

const turn = (key: string, sessionId: string, said: string, answer: string) => turns(key, sessionId, [said, answer]);

async function search(key: string, query: string): Promise<{ status: number; json: unknown }> {
  return call("GET", `/context/search?${query}`, undefined, key);
}

async function found(key: string, query: string): Promise<Page> {
  const { status, json } = await search(key, query);
  expect(status).toBe(200);
  return json as Page;
}

/** The index is written just after a turn ends (off the reply path): wait until `query` finds `count` results. */
async function foundOnce(key: string, query: string, count: number): Promise<Page> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const page = await found(key, query);
    if (page.results.length >= count || Date.now() > deadline) return page;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("GET /context/search", () => {
  it("finds a message of another session of the same person, with its session, title, seq, role and a marked snippet", async () => {
    const bob = TEST_KEYS.chat.key;
    const topic = word("quokka");
    const first = await newSession(bob);
    await turn(bob, first, `Let us plan the ${topic} launch`, "Sure.");
    await newSession(bob);
    const page = await foundOnce(bob, `q=${topic}`, 1);
    expect(page.results).toHaveLength(1);
    expect(page.results[0]).toMatchObject({
      sessionId: first,
      seq: 1,
      role: "user",
      archived: false,
      snippet: expect.stringContaining(`<mark>${topic}</mark>`),
    });
    expect(page.results[0]?.title).toContain(`Let us plan the ${topic} launch`);
    expect(page.results[0]?.userId).toBeUndefined();
    expect(page.nextCursor).toBeNull();
  });

  it("never finds another person's messages, nor another org's", async () => {
    const topic = word("wombat");
    const dana = await newUserKey("org-a");
    const mallory = await newUserKey("org-b");
    await turn(dana.key, await newSession(dana.key), `notes on ${topic}`, "Noted.");
    await turn(mallory.key, await newSession(mallory.key), `notes on ${topic}`, "Noted.");
    expect((await foundOnce(dana.key, `q=${topic}`, 1)).results).toHaveLength(1);
    expect((await foundOnce(mallory.key, `q=${topic}`, 1)).results).toHaveLength(1);
    expect((await found(TEST_KEYS.chat.key, `q=${topic}`)).results).toEqual([]);
    // An admin of org A without all=true searches their own sessions only.
    expect((await found(TEST_KEYS.admin.key, `q=${topic}`)).results).toEqual([]);
  });

  it("lets an org admin search the org's sessions with all=true, each result naming its person", async () => {
    const topic = word("numbat");
    const dana = await newUserKey("org-a");
    const mallory = await newUserKey("org-b");
    const danas = await newSession(dana.key);
    await turn(dana.key, danas, `budget for ${topic}`, "Fine.");
    await turn(mallory.key, await newSession(mallory.key), `budget for ${topic}`, "Fine.");
    await foundOnce(dana.key, `q=${topic}`, 1);
    const page = await found(TEST_KEYS.admin.key, `q=${topic}&all=true`);
    const owner = await env.DB.prepare("SELECT user_id FROM api_keys WHERE id = ?").bind(dana.keyId).first();
    expect(page.results.map((r) => [r.sessionId, r.userId])).toEqual([[danas, owner?.user_id]]);
  });

  it("refuses all=true to a member with 403 insufficient_scope", async () => {
    const { status, json } = await search(TEST_KEYS.chat.key, "q=anything&all=true");
    expect(status).toBe(403);
    expect((json as ErrorBody).error).toMatchObject({ code: "insufficient_scope", param: "all" });
  });

  it("no longer finds a deleted session's messages", async () => {
    const bob = TEST_KEYS.chat.key;
    const topic = word("dugong");
    const id = await newSession(bob);
    await turn(bob, id, `the ${topic} contract`, `About the ${topic} contract: signed.`);
    expect((await foundOnce(bob, `q=${topic}`, 2)).results).toHaveLength(2);
    expect((await call("DELETE", `/context/sessions/${id}`, undefined, bob)).status).toBe(200);
    expect((await found(bob, `q=${topic}`)).results).toEqual([]);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM message_index WHERE session_id = ?").bind(id).first();
    expect(rows).toEqual({ n: 0 });
  });

  it("no longer finds the messages of a session retention deleted", async () => {
    const bob = TEST_KEYS.chat.key;
    const topic = word("bilby");
    const id = await newSession(bob);
    await turn(bob, id, `old ${topic} notes`, "Kept.");
    await foundOnce(bob, `q=${topic}`, 1);
    const stub = sessionStubOrNull(env, id);
    expect(await stub?.expire(new Date(Date.now() + 86_400_000).toISOString())).toBe("deleted");
    expect((await found(bob, `q=${topic}`)).results).toEqual([]);
  });

  it("finds the person's words and the agent's answers, best match first, a page at a time", async () => {
    const bob = TEST_KEYS.chat.key;
    const topic = word("kiwi");
    const id = await newSession(bob);
    await turns(
      bob,
      id,
      [`Is ${topic} on the list, next to many other fruits and vegetables and things?`, "Yes."],
      [`${topic} ${topic} ${topic}`, `${topic} is there: ${topic}.`],
    );
    await foundOnce(bob, `q=${topic}`, 3);
    const first = await found(bob, `q=${topic}&limit=2`);
    // The two messages dense with the word first (in either order), the long one that says it once last.
    expect(first.results.map((r) => [r.seq, r.role]).sort()).toEqual([
      [3, "user"],
      [4, "assistant"],
    ]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await found(bob, `q=${topic}&limit=2&cursor=${first.nextCursor}`);
    expect(second.results.map((r) => r.seq)).toEqual([1]);
    expect(second.nextCursor).toBeNull();
  });

  it("matches the last word as a prefix, and words in any case and accent", async () => {
    const bob = TEST_KEYS.chat.key;
    const topic = word("Crème");
    await turn(bob, await newSession(bob), `Ordering ${topic}brulee for Friday`, "Done.");
    await foundOnce(bob, `q=${encodeURIComponent(topic.toLowerCase().replace("è", "e"))}`, 1);
    const page = await found(bob, `q=${encodeURIComponent(`friday ${topic.toUpperCase()}`)}`);
    expect(page.results).toHaveLength(1);
  });

  it("indexes the first MESSAGE_INDEX_CHARS characters of a long message", async () => {
    const bob = TEST_KEYS.chat.key;
    const [early, late] = [word("early"), word("late")];
    const filler = "lorem ".repeat(Math.ceil(MESSAGE_INDEX_CHARS / 6));
    await turn(bob, await newSession(bob), `${early} ${filler} ${late}`, "Long.");
    expect((await foundOnce(bob, `q=${early}`, 1)).results).toHaveLength(1);
    expect((await found(bob, `q=${late}`)).results).toEqual([]);
  });

  it("indexes the person's words and the answers, not tool results", async () => {
    const bob = TEST_KEYS.chat.key;
    const [asked, called] = [word("asked"), word("Called")];
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: JSON.stringify({ name: called }) }] },
      { type: "completion", content: "Greeted." },
    ]);
    const content = `say hello ${asked} ${script.marker}`;
    expect((await call("POST", `/context/sessions/${await newSession(bob)}/messages`, { content }, bob)).status).toBe(
      200,
    );
    expect((await foundOnce(bob, `q=${asked}`, 1)).results).toHaveLength(1);
    expect((await found(bob, `q=${called}`)).results).toEqual([]);
  });

  it("escapes the snippet's text as HTML around its marks", async () => {
    const bob = TEST_KEYS.chat.key;
    const topic = word("tag");
    await turn(bob, await newSession(bob), `<script>alert(1)</script> & ${topic}`, "Ok.");
    const [hit] = (await foundOnce(bob, `q=${topic}`, 1)).results;
    expect(hit?.snippet).toContain(`&lt;script&gt;alert(1)&lt;/script&gt; &amp; <mark>${topic}</mark>`);
  });

  it.each([
    ["no q", ""],
    ["an empty q", "q="],
    ["a blank q", "q=%20%20%20"],
    ["a q over 200 characters", `q=${"a".repeat(201)}`],
  ])("refuses %s with 400 naming q", async (_name, query) => {
    const { status, json } = await search(TEST_KEYS.chat.key, query);
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ code: "invalid_request", param: "q" });
  });

  it("refuses a cursor that is not one of its own with 400 naming cursor", async () => {
    const { status, json } = await search(TEST_KEYS.chat.key, "q=kiwi&cursor=bm90LWEtY3Vyc29y");
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ code: "invalid_request", param: "cursor" });
  });

  it("takes FTS5 syntax in q as words, never as a query (no 500)", async () => {
    const nasty = [
      '"',
      '""""',
      "NEAR(a b)",
      "a AND",
      "OR NOT",
      "*",
      "owner : x",
      "text:(",
      "-kiwi",
      "^kiwi",
      "kiwi*",
      "{owner text}: x",
      "'; DROP TABLE message_index; --",
      "🦘 emoji",
      "\u0000\u0001",
      '"'.repeat(200),
    ];
    for (const q of nasty) {
      const { status, json } = await search(TEST_KEYS.chat.key, `q=${encodeURIComponent(q)}`);
      expect([q, status]).toEqual([q, 200]);
      expect(json).toMatchObject({ results: expect.any(Array) });
    }
  });
});

// A session's messages a page at a time: GET /context/sessions/:id carries the newest page and says whether older
// messages remain; GET .../messages?before=&limit= pages back through the rest, newest first.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { MessagePage } from "../../src/wire/session";
import { call, createSession, type ErrorBody, getSession } from "../fixtures/sessions";

/** A session with `count` stored messages (user and assistant by turns), written as the loop writes them. */
async function sessionWithMessages(count: number): Promise<string> {
  const sessionId = await createSession();
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
  await runInDurableObject(stub, (instance: AgentSession) => {
    for (let n = 1; n <= count; n++) {
      const turnId = `turn-${Math.ceil(n / 2)}`;
      if (n % 2 === 1) instance.store.appendMessage({ turnId, role: "user", content: `message ${n}`, kind: "message" });
      else instance.store.appendMessage({ turnId, role: "assistant", content: `message ${n}`, kind: "answer" });
    }
  });
  return sessionId;
}

const page = async (sessionId: string, query: string) => {
  const { status, json } = await call("GET", `/context/sessions/${sessionId}/messages${query}`);
  if (status !== 200) throw new Error(`page refused (${status}): ${JSON.stringify(json)}`);
  return json as MessagePage;
};

describe("paged messages", () => {
  it("answers the newest messages first, then the ones before a seq, and says when none remain", async () => {
    const sessionId = await sessionWithMessages(6);
    const first = await page(sessionId, "?limit=4");
    expect([first.messages.map((m) => m.content), first.hasMore]).toEqual([
      ["message 6", "message 5", "message 4", "message 3"],
      true,
    ]);
    const before = first.messages.at(-1)?.seq ?? 0;
    const second = await page(sessionId, `?before=${before}&limit=4`);
    expect([second.messages.map((m) => m.content), second.hasMore]).toEqual([["message 2", "message 1"], false]);
  });

  it("carries only the newest 50 messages in the session's view, with the oldest seq and that more remain", async () => {
    const sessionId = await sessionWithMessages(60);
    const view = await getSession(sessionId);
    expect(view.conversation.map((m) => m.content)).toEqual(Array.from({ length: 50 }, (_, i) => `message ${i + 11}`));
    expect([view.hasMoreMessages, view.oldestSeq]).toEqual([true, view.conversation[0]?.seq]);
    const older = await page(sessionId, `?before=${view.oldestSeq}`);
    expect([older.messages.length, older.hasMore]).toEqual([10, false]);
  });

  it("says no more messages remain in the view of a short session", async () => {
    const view = await getSession(await sessionWithMessages(2));
    expect([view.conversation.length, view.hasMoreMessages]).toEqual([2, false]);
  });

  it("refuses a limit above 200, naming limit", async () => {
    const { status, json } = await call("GET", `/context/sessions/${await createSession()}/messages?limit=201`);
    expect([status, (json as ErrorBody).error.code, (json as ErrorBody).error.param]).toEqual([
      400,
      "invalid_request",
      "limit",
    ]);
  });

  it("refuses a before that is not a positive whole number, naming before", async () => {
    const { status, json } = await call("GET", `/context/sessions/${await createSession()}/messages?before=abc`);
    expect([status, (json as ErrorBody).error.param]).toEqual([400, "before"]);
  });

  it("answers 404 session_not_found for a session that does not exist", async () => {
    const missing = env.AGENT_SESSION.newUniqueId().toString();
    const { status, json } = await call("GET", `/context/sessions/${missing}/messages`);
    expect([status, (json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
  });
});

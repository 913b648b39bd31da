// DELETE /context/sessions/:id: the owner (or an admin of the org) deletes a session for good; from then on its id
// answers 404 session_not_found at every door, its list entry is gone, its sockets are closed and its storage empty.

import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readTurnReads } from "../../src/session/session-model";
import { EMPTY_FINGERPRINT } from "../../src/session/thread-head";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, sendMessage } from "../fixtures/sessions";
import { connect, issueTicket, openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey } from "../passthrough/harness";

const remove = (id: string, key?: string) => call("DELETE", `/context/sessions/${id}`, undefined, key);

async function indexRow(id: string): Promise<unknown> {
  return env.DB.prepare("SELECT session_id FROM session_index WHERE session_id = ?").bind(id).first();
}

/** A session with a conversation (a message and the model's answer). */
async function talkedSession(): Promise<string> {
  const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
  const id = await createSession();
  await sendMessage(id, `remember this ${script.marker}`);
  return id;
}

describe("DELETE /context/sessions/:id", () => {
  it("deletes the owner's session: 200, then its id answers 404 session_not_found", async () => {
    const id = await talkedSession();
    const deleted = await remove(id);
    expect(deleted).toEqual({ status: 200, json: { sessionId: id, deleted: true } });
    const read = await call("GET", `/context/sessions/${id}`);
    expect(read.status).toBe(404);
    expect((read.json as ErrorBody).error).toMatchObject({ code: "session_not_found", type: "not_found_error" });
  });

  it("answers 404 at every door of the deleted session, and a second delete too", async () => {
    const id = await talkedSession();
    expect((await remove(id)).status).toBe(200);
    const doors: [string, string, unknown?][] = [
      ["GET", `/context/sessions/${id}`],
      ["POST", `/context/sessions/${id}/messages`, { content: "still there?" }],
      ["POST", `/context/sessions/${id}/approvals`, { decisions: [{ toolCallId: "c1", approved: true }] }],
      ["POST", `/context/sessions/${id}/tool-results`, { results: [{ toolCallId: "c1", resultJson: "{}" }] }],
      ["POST", `/context/sessions/${id}/workflows/switch_mode`, { parameters: { mode: "workspace" } }],
      ["POST", `/context/sessions/${id}/ws-ticket`],
      ["GET", `/context/sessions/${id}/export`],
      ["PATCH", `/context/sessions/${id}`, { title: "Back again" }],
      ["DELETE", `/context/sessions/${id}`],
    ];
    for (const [method, path, body] of doors) {
      const answer = await call(method, path, body);
      expect([path, method, answer.status, (answer.json as ErrorBody).error.code]).toEqual([
        path,
        method,
        404,
        "session_not_found",
      ]);
    }
  });

  it("answers the SSE form of a message 404 before any stream opens", async () => {
    const id = await talkedSession();
    await remove(id);
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${TEST_KEYS.chat.key}`,
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify({ content: "hello?" }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("session_not_found");
  });

  it("answers the agent door's request that names the deleted session 404", async () => {
    const id = await talkedSession();
    await remove(id);
    const response = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
      method: "POST",
      headers: {
        authorization: `Bearer ${TEST_KEYS.chat.key}`,
        "content-type": "application/json",
        "x-aptix-session": id,
      },
      body: JSON.stringify({ model: "aptix-agent/general", messages: [{ role: "user", content: "again" }] }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("session_not_found");
  });

  it("answers the agent door 404 for the deleted session's history resent without the header", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "First answer." }]);
    const door = (messages: { role: string; content: string }[]) =>
      exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_KEYS.chat.key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "aptix-agent/general", messages }),
      });
    const question = { role: "user", content: `one ${script.marker}` };
    const first = await door([question]);
    expect(first.status).toBe(200);
    const answer = ((await first.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message;
    const id = first.headers.get("x-aptix-session") ?? "";
    expect((await remove(id)).status).toBe(200);
    const again = await door([
      question,
      { role: "assistant", content: answer?.content ?? "" },
      { role: "user", content: "two" },
    ]);
    expect(again.status).toBe(404);
    expect(((await again.json()) as ErrorBody).error.code).toBe("session_not_found");
  });

  it("answers another org's history sent with a deleted session's header with a new session, as before the delete", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "First answer." },
      { type: "completion", content: "Another org's new session." },
    ]);
    const door = (key: string, messages: { role: string; content: string }[], session?: string) =>
      exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          ...(session ? { "x-aptix-session": session } : {}),
        },
        body: JSON.stringify({ model: "aptix-agent/general", messages }),
      });
    const question = { role: "user", content: `one ${script.marker}` };
    const first = await door(TEST_KEYS.chat.key, [question]);
    const answer = ((await first.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message;
    const id = first.headers.get("x-aptix-session") ?? "";
    expect((await remove(id)).status).toBe(200);
    const history = [question, { role: "assistant", content: answer?.content ?? "" }, { role: "user", content: "two" }];
    const other = await door(TEST_KEYS.otherOrg.key, history, id);
    expect(other.status).toBe(200);
    expect(other.headers.get("x-aptix-session")).not.toBe(id);
  });

  it("refuses a socket ticket issued before the delete, like every unknown ticket", async () => {
    const id = await talkedSession();
    const ticket = await issueTicket(id);
    await remove(id);
    const response = await connect(id, ticket);
    expect(response.status).toBe(401);
    expect(((await response.json()) as ErrorBody).error.code).toBe("invalid_ticket");
  });

  it("tells an open socket the session is gone and closes it", async () => {
    const id = await createSession();
    const socket = await openSocket(id);
    const closed = new Promise<number>((resolve) => socket.ws.addEventListener("close", (e) => resolve(e.code)));
    const from = socket.frames.length;
    await remove(id);
    const error = await socket.waitForType("error", from);
    expect(error).toMatchObject({ type: "error", code: "session_not_found" });
    expect(await closed).toBe(4404);
  });

  it("stops a running turn first: its request answers cancelled, then the session is gone", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Too late.", delayFirstByteMs: 3_000 }]);
    const id = await createSession();
    const running = call("POST", `/context/sessions/${id}/messages`, { content: `slow ${script.marker}` });
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const view = await call("GET", `/context/sessions/${id}`);
      if ((view.json as { status: string }).status === "running") break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const started = Date.now();
    expect((await remove(id)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_500);
    const answered = await running;
    expect([answered.status, (answered.json as { status: string }).status]).toEqual([200, "cancelled"]);
    expect((await call("GET", `/context/sessions/${id}`)).status).toBe(404);
  });

  it("takes the session off the list and empties its storage, alarm included", async () => {
    const id = await talkedSession();
    expect(await indexRow(id)).not.toBeNull();
    await remove(id);
    expect(await indexRow(id)).toBeNull();
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    const left = await runInDurableObject(stub, async (instance, state) => ({
      record: instance.store.record(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(left).toEqual({ record: null, alarm: null });
  });

  it("is never made again by the agent door's create-if-new in the object that deleted it", async () => {
    const id = await talkedSession();
    await remove(id);
    const { mode, basePrompt } = await readTurnReads(env.DB, "org-a", "general");
    if (!mode) throw new Error("no general mode");
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    const { org, user } = TEST_KEYS.chat;
    const answered = await runInDurableObject(stub, async (instance) => {
      const outcome = await instance.chatTurn(
        { org, user, keyId: "chat" },
        {
          input: { type: "message", content: "again" },
          seed: [],
          clientTools: [],
          reads: { mode, basePrompt },
          prepaid: false,
          create: { org, user, mode: "general" },
          thread: { keyId: "chat", after: EMPTY_FINGERPRINT },
        },
      );
      return { outcome, record: instance.store.record() };
    });
    expect(answered).toMatchObject({ outcome: { ok: false, code: "session_not_found" }, record: null });
  });

  it("keeps the session's usage rows (they hold no text)", async () => {
    const id = await talkedSession();
    const count = async () =>
      (
        await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_records WHERE session_id = ?")
          .bind(id)
          .first<{ n: number }>()
      )?.n ?? 0;
    // Usage rows are written off the reply path: wait for the turn's.
    const deadline = Date.now() + 5_000;
    while ((await count()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    const written = await count();
    expect(written).toBeGreaterThan(0);
    await remove(id);
    expect(await count()).toBe(written);
  });

  it("answers another org's caller 404, and deletes nothing", async () => {
    const id = await createSession();
    const refused = await remove(id, TEST_KEYS.otherOrg.key);
    expect([refused.status, (refused.json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
    expect((await call("GET", `/context/sessions/${id}`)).status).toBe(200);
  });

  it("answers another member of the org 404, as another org, and deletes nothing", async () => {
    const id = await createSession(undefined, TEST_KEYS.admin.key);
    const refused = await remove(id, TEST_KEYS.chat.key);
    expect(refused.status).toBe(404);
    expect((refused.json as ErrorBody).error).toMatchObject({ code: "session_not_found", type: "not_found_error" });
    expect((await call("GET", `/context/sessions/${id}`, undefined, TEST_KEYS.admin.key)).status).toBe(200);
  });

  it("lets an admin of the org delete another user's session", async () => {
    const { key } = await newChatKey("org-a");
    const id = await createSession(undefined, key);
    expect((await remove(id, TEST_KEYS.admin.key)).status).toBe(200);
    expect((await call("GET", `/context/sessions/${id}`, undefined, key)).status).toBe(404);
  });
});

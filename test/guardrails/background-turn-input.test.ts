// A background turn's message (`Prefer: respond-async`, A2A's returnImmediately, a schedule's run), and a message
// sent as an event stream, go through the input guardrails before they are answered, as on every other door: a
// background message they block is refused 400 guardrail_blocked (not accepted 202 and failed later), and a message
// they pass is in storage when its answer (the 202, the stream's 200) goes out, so nothing the person wrote is only in
// memory when they are told it was taken.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { Caller } from "../../src/session/caller";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession, type ErrorBody } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { EMAIL, one, setOrgGuardrails } from "./turn-setup";

// The org's list is kept per isolate: the file leaves none behind for another file the isolate may run.
afterAll(() => setOrgGuardrails([]));

describe("a background turn's message and the input guardrails", () => {
  it("is refused 400 guardrail_blocked when they block it, as the synchronous route refuses it", async () => {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const id = await createSession();
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", prefer: "respond-async" },
      body: JSON.stringify({ content: `mail ${EMAIL} ${script.marker}` }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({ code: "guardrail_blocked", param: "content" });
    expect(await script.bodies()).toEqual([]);
  });

  /**
   * With a redacting input guardrail on, asks `answer` of a new session's object, and reads the person's stored
   * messages at once, in the same turn of the object's event loop as the answer: what is stored when it goes out.
   */
  async function storedAtAnswer<T extends { ok: boolean }>(
    answer: (session: AgentSession, caller: Caller, content: string) => Promise<T>,
    /** What is done with the answer once the messages are read (a stream let go). */
    after: (answered: T) => Promise<unknown> = async () => {},
  ): Promise<{ ok: boolean; stored: string[] }> {
    await setOrgGuardrails([one("pii", "input", "redact")]);
    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(await createSession()));
    const { org, user } = TEST_KEYS.chat;
    return runInDurableObject(stub, async (session: AgentSession, state) => {
      const answered = await answer(session, { org, user, keyId: "test-chat-key" }, `to ${EMAIL} ${script.marker}`);
      const rows = state.storage.sql.exec<{ content: string }>("SELECT content FROM messages WHERE role = 'user'");
      const stored = rows.toArray().map((row) => row.content);
      await after(answered);
      return { ok: answered.ok, stored };
    });
  }

  it("is stored, as the guardrails left it, by the time the turn is answered accepted", async () => {
    const atAnswer = await storedAtAnswer((session, caller, content) =>
      session.startTurn(caller, { kind: "message", content }),
    );
    expect(atAnswer.ok).toBe(true);
    expect(atAnswer.stored).toHaveLength(1);
    expect(atAnswer.stored[0]).not.toContain(EMAIL);
  });

  it("is stored, as the guardrails left it, by the time a message's event stream opens", async () => {
    const atOpen = await storedAtAnswer(
      (session, caller, content) => session.sendMessageStream(caller, content),
      async (opened) => (opened.ok ? opened.value.cancel() : undefined),
    );
    expect(atOpen.ok).toBe(true);
    expect(atOpen.stored).toHaveLength(1);
    expect(atOpen.stored[0]).not.toContain(EMAIL);
  });
});

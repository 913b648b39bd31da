// The session's view stays small whatever the model writes: it carries the summary's text cut to a preview (with the
// whole summary's length), and its newest messages only as far as VIEW_MESSAGE_CHARS; the whole summary is at
// GET /context/sessions/:id/summary, for the session's owner or an admin of its org (anyone else: 404).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import { SUMMARY_PREVIEW_CHARS, VIEW_CONTENT_CHARS } from "../../src/wire/session";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, toUpstreamA } from "../routing/fixtures";

const LONG_SUMMARY = "The user and the agent went over the plan again. ".repeat(6_000);
const KiB = 1024;

const stubOf = (sessionId: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));

/** A session of one turn whose stored summary (of that turn) is LONG_SUMMARY, about 290 KB. */
async function sessionWithLongSummary(): Promise<string> {
  const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
  const sessionId = await createSession(await modeOnRoute(await toUpstreamA()));
  await sendMessage(sessionId, `hello ${script.marker}`);
  await runInDurableObject(stubOf(sessionId), (instance: AgentSession) =>
    instance.store.saveSummary({ fromSeq: 1, toSeq: 2, text: LONG_SUMMARY }, null),
  );
  return sessionId;
}

const viewBytes = async (sessionId: string) =>
  new TextEncoder().encode(JSON.stringify((await call("GET", `/context/sessions/${sessionId}`)).json)).length;

describe("the session's view and its summary", () => {
  it("carries the summary cut to a preview, with the whole summary's length", async () => {
    const sessionId = await sessionWithLongSummary();
    const { summary } = await getSession(sessionId);
    expect(summary).toMatchObject({
      fromSeq: 1,
      toSeq: 2,
      text: LONG_SUMMARY.slice(0, SUMMARY_PREVIEW_CHARS),
      textChars: LONG_SUMMARY.length,
      truncated: true,
    });
    expect(await viewBytes(sessionId)).toBeLessThan(100 * KiB);
  });

  it("answers the whole summary at GET /context/sessions/:id/summary, to its owner and an admin of its org", async () => {
    const sessionId = await sessionWithLongSummary();
    for (const key of [TEST_KEYS.chat.key, TEST_KEYS.admin.key]) {
      const { status, json } = await call("GET", `/context/sessions/${sessionId}/summary`, undefined, key);
      expect([status, (json as { summary: { text: string } }).summary.text === LONG_SUMMARY]).toEqual([200, true]);
    }
  });

  it("answers 404 for the summary to another member and to another org", async () => {
    const sessionId = await sessionWithLongSummary();
    for (const key of [TEST_KEYS.otherMember.key, TEST_KEYS.otherOrg.key]) {
      const { status } = await call("GET", `/context/sessions/${sessionId}/summary`, undefined, key);
      expect(status).toBe(404);
    }
  });

  it("answers a null summary before the first compaction", async () => {
    const sessionId = await createSession();
    const { status, json } = await call("GET", `/context/sessions/${sessionId}/summary`);
    expect([status, json]).toEqual([200, { sessionId, summary: null }]);
  });

  it("carries only as many of the newest messages as fit its size, and says older ones remain", async () => {
    const sessionId = await sessionWithLongSummary();
    await runInDurableObject(stubOf(sessionId), (instance: AgentSession) => {
      for (let n = 0; n < 40; n++) {
        instance.store.appendMessage({
          turnId: `t${n}`,
          role: "assistant",
          content: `${n} ${"x".repeat(20_000)}`,
          kind: "answer",
        });
      }
    });
    const view = await getSession(sessionId);
    expect(await viewBytes(sessionId)).toBeLessThan(100 * KiB);
    expect([view.conversation.at(-1)?.content?.startsWith("39 "), view.hasMoreMessages]).toEqual([true, true]);
  });

  it("cuts a 200 KB answer in the view, marked truncated, the whole still at GET .../messages", async () => {
    const answer = "A long answer. ".repeat(14_000);
    const sessionId = await createSession();
    // As a route without contextTokens (no max_tokens) lets a model answer, written as the loop writes an answer.
    await runInDurableObject(stubOf(sessionId), (instance: AgentSession) =>
      instance.store.appendMessage({ turnId: "t1", role: "assistant", content: answer, kind: "answer" }),
    );
    const newest = (await getSession(sessionId)).conversation.at(-1);
    const page = await call("GET", `/context/sessions/${sessionId}/messages?before=${(newest?.seq ?? 0) + 1}&limit=1`);
    const whole = (page.json as { messages: { content: string }[] }).messages[0]?.content;
    expect(await viewBytes(sessionId)).toBeLessThan(100 * KiB);
    expect([newest?.content, newest?.contentChars, newest?.truncated, whole === answer]).toEqual([
      answer.slice(0, VIEW_CONTENT_CHARS),
      answer.length,
      true,
      true,
    ]);
  });
});

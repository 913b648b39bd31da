// A warm session's turn on the agent's OpenAI door costs D1 one write and no read (issue 46): the conversation's head
// rides the batch of the session's list entry (with the search feed and the turn's usage rows), which the object
// writes before the answer goes out, so a client that continues by its history at once finds the session from any
// isolate; the session checks a history against the head it keeps, and the isolate that answered remembers it.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { forgetIsolateState } from "../../src/isolate-cache";
import type { AgentSession } from "../../src/session/agent-session";
import { agentClient } from "../fixtures/agent-client";
import { type D1Call, refuseD1Batches, spyOnD1 } from "../fixtures/d1-spy";
import { scriptUpstream } from "../fixtures/upstream";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const MODEL = "aptix-agent/general";

const settled = (sessionId: string) =>
  runInDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId)), (instance: AgentSession) =>
    instance.list.settled(),
  );

/** The tables a call writes or reads, in its statements' order. */
const tablesOf = (call: D1Call | undefined) =>
  (call?.sql ?? []).map(
    (sql) =>
      /^(?:UPDATE|INSERT(?: OR IGNORE)? INTO|SELECT EXISTS \( SELECT 1 FROM|SELECT \w+ FROM) (\w+)/.exec(sql)?.[1] ??
      sql,
  );

/** A conversation of two answered turns on the door (its object awake, the isolate's copies read), and its script. */
async function warmConversation(answers: string[]) {
  const script = await scriptUpstream(
    ["One.", "Two.", ...answers].map((content) => ({ type: "completion" as const, content })),
  );
  const messages: Message[] = [{ role: "user", content: `one ${script.marker}` }];
  const first = await agentClient().chat.completions.create({ model: MODEL, messages }).withResponse();
  const sessionId = first.response.headers.get("x-aptix-session") ?? "";
  messages.push({ role: "assistant", content: first.data.choices[0]?.message.content ?? "" });
  messages.push({ role: "user", content: `two ${script.marker}` });
  const second = await agentClient().chat.completions.create({ model: MODEL, messages });
  messages.push({ role: "assistant", content: second.choices[0]?.message.content ?? "" });
  await settled(sessionId);
  return { script, sessionId, messages };
}

describe("a warm session's turn on the OpenAI door in D1", () => {
  it("answers after one D1 call: a batch with the conversation's head, the list entry and the usage row", async () => {
    const { script, sessionId } = await warmConversation(["Three."]);
    const { result, calls } = await spyOnD1(() =>
      agentClient().chat.completions.create(
        { model: MODEL, messages: [{ role: "user", content: `three ${script.marker}` }] },
        { headers: { "X-Aptix-Session": sessionId } },
      ),
    );
    expect(result.choices[0]?.message.content).toBe("Three.");
    expect(calls.map((call) => call.kind)).toEqual(["batch"]);
    expect(tablesOf(calls[0])).toEqual([
      "session_index",
      "agent_threads",
      "message_index",
      "usage_records",
      "webhook_endpoints",
    ]);
  });

  it("ends a streamed answer after the same one batch", async () => {
    const { script, sessionId } = await warmConversation(["Three."]);
    const { result, calls } = await spyOnD1(async () => {
      const stream = await agentClient().chat.completions.create(
        { model: MODEL, stream: true, messages: [{ role: "user", content: `three ${script.marker}` }] },
        { headers: { "X-Aptix-Session": sessionId } },
      );
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
      return text;
    });
    expect(result).toBe("Three.");
    expect(calls.map((call) => [call.kind, tablesOf(call).slice(0, 2)])).toEqual([
      ["batch", ["session_index", "agent_threads"]],
    ]);
  });

  it("continues a history resent to the isolate that answered it without reading D1, after one batch", async () => {
    const { script, sessionId, messages } = await warmConversation(["Three.", "Four."]);
    messages.push({ role: "user", content: `three ${script.marker}` });
    const third = await agentClient().chat.completions.create({ model: MODEL, messages });
    messages.push({ role: "assistant", content: third.choices[0]?.message.content ?? "" });
    messages.push({ role: "user", content: `four ${script.marker}` });
    const { result, calls } = await spyOnD1(() =>
      agentClient().chat.completions.create({ model: MODEL, messages }).withResponse(),
    );
    expect(result.data.choices[0]?.message.content).toBe("Four.");
    expect(result.response.headers.get("x-aptix-session")).toBe(sessionId);
    expect(calls.map((call) => [call.kind, tablesOf(call).slice(0, 2)])).toEqual([
      ["batch", ["session_index", "agent_threads"]],
    ]);
  });

  it("finds the session of a history no isolate remembers by one read of D1, written before the answer", async () => {
    const { script, sessionId, messages } = await warmConversation(["Three."]);
    messages.push({ role: "user", content: `three ${script.marker}` });
    // An isolate that did not answer the conversation, at once: the head it looks up was written before the answer.
    forgetIsolateState();
    const { result, calls } = await spyOnD1(() =>
      agentClient().chat.completions.create({ model: MODEL, messages }).withResponse(),
    );
    expect(result.data.choices[0]?.message.content).toBe("Three.");
    expect(result.response.headers.get("x-aptix-session")).toBe(sessionId);
    expect(calls.filter((call) => tablesOf(call)[0] === "agent_threads").map((call) => call.kind)).toEqual(["query"]);
  });

  it("checks a history sent with the header against the session's own head, without reading D1", async () => {
    const { script, sessionId, messages } = await warmConversation(["Three."]);
    messages.push({ role: "user", content: `three ${script.marker}` });
    forgetIsolateState();
    const { result, calls } = await spyOnD1(() =>
      agentClient()
        .chat.completions.create({ model: MODEL, messages }, { headers: { "X-Aptix-Session": sessionId } })
        .withResponse(),
    );
    expect(result.response.headers.get("x-aptix-session")).toBe(sessionId);
    expect(calls.filter((call) => tablesOf(call)[0] === "agent_threads")).toEqual([]);
  });

  it("starts a new session for a history at a head the session has moved on from, though an isolate remembers it", async () => {
    const { script, sessionId, messages } = await warmConversation(["Three.", "A new session's answer."]);
    // The session goes on by its header alone: this isolate still remembers it at the history's head.
    await agentClient().chat.completions.create(
      { model: MODEL, messages: [{ role: "user", content: `three ${script.marker}` }] },
      { headers: { "X-Aptix-Session": sessionId } },
    );
    messages.push({ role: "user", content: `elsewhere ${script.marker}` });
    const other = await agentClient().chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(other.data.choices[0]?.message.content).toBe("A new session's answer.");
    expect(other.response.headers.get("x-aptix-session")).not.toBe(sessionId);
  });

  it("continues by history after D1 refused the batch with the head: the session keeps its own", async () => {
    const { script, sessionId, messages } = await warmConversation(["Three.", "Four."]);
    messages.push({ role: "user", content: `three ${script.marker}` });
    const { result, refused } = await refuseD1Batches(
      (sql) => sql.some((statement) => statement.includes("agent_threads")),
      () => agentClient().chat.completions.create({ model: MODEL, messages }).withResponse(),
    );
    expect(result.data.choices[0]?.message.content).toBe("Three.");
    expect(refused.length).toBeGreaterThan(0);
    messages.push({ role: "assistant", content: "Three." }, { role: "user", content: `four ${script.marker}` });
    const next = await agentClient().chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(next.data.choices[0]?.message.content).toBe("Four.");
    expect(next.response.headers.get("x-aptix-session")).toBe(sessionId);
  });

  it("starts a new session for that history in an isolate that did not answer it, D1 never having had its head", async () => {
    const { script, sessionId, messages } = await warmConversation(["Three.", "A new session's answer."]);
    messages.push({ role: "user", content: `three ${script.marker}` });
    await refuseD1Batches(
      (sql) => sql.some((statement) => statement.includes("agent_threads")),
      () => agentClient().chat.completions.create({ model: MODEL, messages }),
    );
    messages.push({ role: "assistant", content: "Three." }, { role: "user", content: `four ${script.marker}` });
    forgetIsolateState();
    const next = await agentClient().chat.completions.create({ model: MODEL, messages }).withResponse();
    expect(next.data.choices[0]?.message.content).toBe("A new session's answer.");
    expect(next.response.headers.get("x-aptix-session")).not.toBe(sessionId);
  });
});

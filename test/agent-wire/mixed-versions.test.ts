// For the few minutes of a deploy, a Worker and a session object of different versions talk (an active Durable Object
// keeps its code until it is safe to switch): the session still answers a Worker of the version before in the shape it
// reads, and the Worker reads the end of a stream from a session of the version before, which records no head.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { completionMeta, doorChunks, type StreamedAnswer } from "../../src/agent-wire/completion";
import type { AgentSession } from "../../src/session/agent-session";
import { readTurnReads } from "../../src/session/session-model";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";

describe("a deploy's mixed versions on the OpenAI door", () => {
  it("answers a Worker of the version before with the text alone and the calls that wait, and records no head", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "First." },
      { type: "completion", toolCalls: [{ name: "get_weather", arguments: '{"city":"Paris"}' }] },
    ]);
    const first = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEYS.chat.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "aptix-agent/general", messages: [{ role: "user", content: script.marker }] }),
    });
    const sessionId = first.headers.get("x-aptix-session") ?? "";
    const { mode, basePrompt } = await readTurnReads(env.DB, "org-a", "general");
    if (!mode) throw new Error("no general mode");
    const { org, user } = TEST_KEYS.chat;
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
    const answered = await runInDurableObject(stub, async (instance: AgentSession, state: DurableObjectState) => {
      const head = () => state.storage.sql.exec("SELECT head FROM thread_head").toArray()[0]?.head;
      const before = head();
      // The turn as that version's Worker sends it: no `thread`.
      const outcome = await instance.chatTurn(
        { org, user, keyId: "chat" },
        {
          input: { type: "message", content: `weather? ${script.marker}` },
          seed: [],
          clientTools: [
            { type: "function", function: { name: "get_weather", description: "", parameters: { type: "object" } } },
          ],
          reads: { mode, basePrompt },
          prepaid: false,
        },
      );
      return { outcome, headBefore: before, headAfter: head() };
    });
    if (!answered.outcome.ok || "headMoved" in answered.outcome) throw new Error("the turn was refused");
    const { value } = answered.outcome;
    expect({ content: value.content, waiting: value.waitingForClient.length, head: value.head }).toEqual({
      content: "",
      waiting: 1,
      head: null,
    });
    expect(answered.headAfter).toBe(answered.headBefore);
  });

  it("reads the end of a stream from a session of the version before as no head recorded, with what the client got", async () => {
    const events = [
      'data: {"type":"assistant_delta","turnId":"t1","text":"Hello","seq":2}\n\n',
      'data: {"type":"turn_completed","turnId":"t1","response":{"status":"completed","toolCalls":[]},"seq":3}\n\n',
      'data: {"type":"door_usage","usage":null}\n\n',
    ];
    const frames = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const event of events) controller.enqueue(new TextEncoder().encode(event));
        controller.close();
      },
    });
    const ends: StreamedAnswer[] = [];
    const items = doorChunks(frames, completionMeta("aptix-agent/general"), {
      clientTools: new Set(),
      includeUsage: false,
      onEnd: (answer) => {
        ends.push({ ...answer });
      },
      onBreak: (error) => {
        throw error;
      },
    });
    for await (const _ of items) {
      // Read to the end.
    }
    expect(ends.map((e) => ({ head: e.head, content: e.content, turnId: e.turnId }))).toEqual([
      { head: undefined, content: "Hello", turnId: "t1" },
    ]);
  });
});

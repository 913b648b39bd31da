// Stop keeps what was streamed: a running turn cancelled mid-answer stores the answer so far as the assistant's
// message, marked `stopped`, so the stored conversation has what the person saw.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession, getSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

/** One streamed chunk of an answer, then the upstream stalls (the turn runs until it is stopped). */
const chunk = (content: string) =>
  `data: ${JSON.stringify({
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }],
  })}`;

describe("stopping a turn mid-answer", () => {
  it("stores the text streamed so far as the assistant's message, marked stopped", async () => {
    const script = await scriptUpstream([
      { type: "sse", events: [chunk("The first half "), chunk("of an answer")], end: "stall" },
    ]);
    const id = await createSession();
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `explain ${script.marker}`, clientMessageId: "m1" });
    await socket.waitFor((f) => f.type === "assistant_delta" && String(f.text).endsWith("answer"));
    socket.send({ type: "cancel" });
    const done = await socket.waitForType("turn_completed");

    expect(done.response).toMatchObject({ status: "cancelled" });
    const session = await getSession(id);
    expect(session.conversation.map((m) => ({ role: m.role, kind: m.kind, content: m.content }))).toEqual([
      { role: "user", kind: "message", content: `explain ${script.marker}` },
      { role: "assistant", kind: "stopped", content: "The first half of an answer" },
    ]);
    socket.close();
  });

  it("stores the text an SSE stream was shown that the log had not written yet when the turn is stopped", async () => {
    const script = await scriptUpstream([
      { type: "sse", events: [chunk("Streamed to SSE "), chunk("at once")], end: "stall" },
    ]);
    const id = await createSession();
    const socket = await openSocket(id);
    // The turn over SSE: its deltas reach the stream at once, and the log (and the sockets) a moment later.
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: `explain ${script.marker}` }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!seen.includes("at once")) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += value;
    }
    // Stopped as soon as the stream shows the last words, before their deltas' write.
    socket.send({ type: "cancel" });
    await socket.waitForType("turn_completed");
    while (!(await reader.read()).done) {}

    const session = await getSession(id);
    expect(session.conversation.at(-1)).toMatchObject({
      role: "assistant",
      kind: "stopped",
      content: "Streamed to SSE at once",
    });
    socket.close();
  });

  it("stores nothing for a turn stopped before the model said a word", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const id = await createSession();
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `think ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("turn_started");
    socket.send({ type: "cancel" });
    await socket.waitForType("turn_completed");

    expect((await getSession(id)).conversation.map((m) => m.role)).toEqual(["user"]);
    socket.close();
  });
});

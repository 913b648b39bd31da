// Turns over the WebSocket: the frame sequence, several sockets, approvals and client tools, busy, cancel.
import { describe, expect, it } from "vitest";
import { frameShapes } from "../fixtures/frame-shapes";
import golden from "../fixtures/golden/full-turn.frames.json";
import { approve, call, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };

describe("turns over the WebSocket", () => {
  it("streams a full turn's frames in the golden order and shapes", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [hello] },
      { type: "completion", content: "Greeted Dana for you.", chunkSize: 6 },
    ]);
    const id = await createSession();
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `greet Dana ${script.marker}`, clientMessageId: "m1" });
    const done = await socket.waitForType("turn_completed");

    expect(frameShapes(socket.frames)).toEqual(golden);
    expect(socket.frames[1]).toMatchObject({ type: "turn_started", clientMessageId: "m1", seq: 1 });
    expect(socket.logged().map((f) => f.seq)).toEqual(socket.logged().map((_, i) => i + 1));
    const deltas = socket.frames.filter((f) => f.type === "assistant_delta").map((f) => f.text);
    expect(deltas.join("")).toBe("Greeted Dana for you.");
    expect(done.response).toMatchObject({
      sessionId: id,
      status: "completed",
      text: "Greeted Dana for you.",
      iterations: 2,
    });
    socket.close();
  });

  it("sends every frame to every socket of the session", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello to both tabs." }]);
    const id = await createSession();
    const [tab, phone] = [await openSocket(id), await openSocket(id)];
    tab.send({ type: "user_message", content: `hi ${script.marker}`, clientMessageId: "m1" });
    await tab.waitForType("turn_completed");
    await phone.waitForType("turn_completed");
    expect(phone.logged()).toEqual(tab.logged());
    tab.close();
    phone.close();
  });

  it("streams a turn started over HTTP to open sockets", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "From HTTP." }]);
    const id = await createSession();
    const socket = await openSocket(id);
    await sendMessage(id, `hi ${script.marker}`);
    const done = await socket.waitForType("turn_completed");
    expect(done.response).toMatchObject({ text: "From HTTP.", status: "completed" });
    socket.close();
  });

  it("pauses for approval and hands a client tool over the socket, then completes", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [{ name: "workspace_write_file", arguments: '{"path":"a.txt","content":"A"}' }],
      },
      { type: "completion", content: "Written." },
    ]);
    const id = await createSession("workspace");
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `write a.txt ${script.marker}`, clientMessageId: "m1" });
    const approval = await socket.waitForType("approval_required");
    const [pending] = approval.toolCalls as { id: string; approval: string }[];
    expect(pending?.approval).toBe("pending");

    socket.send({ type: "approval", decisions: [{ toolCallId: pending?.id, approved: true }] });
    const handoff = await socket.waitForType("client_tool_required");
    expect(handoff.toolCalls).toMatchObject([{ id: pending?.id, requiresClientExecution: true }]);

    socket.send({
      type: "tool_results",
      results: [{ toolCallId: pending?.id, resultJson: '{"path":"a.txt","bytesWritten":1}' }],
    });
    const done = await socket.waitForType("turn_completed");
    expect(done.response).toMatchObject({ status: "completed", text: "Written." });

    const count = socket.frames.length;
    socket.send({
      type: "tool_results",
      results: [{ toolCallId: pending?.id, resultJson: '{"path":"a.txt","bytesWritten":1}' }],
    });
    expect(await socket.waitForType("error", count)).toMatchObject({ code: "nothing_pending" });
    socket.close();
  });

  it("resumes a turn started on the socket with an approval sent over HTTP", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [{ name: "workspace_write_file", arguments: '{"path":"a.txt","content":"A"}' }],
      },
      { type: "completion", content: "Not written." },
    ]);
    const id = await createSession("workspace");
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `write ${script.marker}`, clientMessageId: "m1" });
    const approval = await socket.waitForType("approval_required");
    const [pending] = approval.toolCalls as { id: string }[];
    const http = await approve(id, [{ toolCallId: pending?.id ?? "", approved: false }]);
    expect((http.json as { status: string }).status).toBe("completed");
    expect((await socket.waitForType("turn_completed")).response).toMatchObject({ text: "Not written." });
    socket.close();
  });

  it("answers a second user_message during a turn with error session_busy, and loses nothing", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "slow", delayFirstByteMs: 500 }]);
    const id = await createSession();
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `first ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("turn_started");
    socket.send({ type: "user_message", content: "second", clientMessageId: "m2" });
    expect(await socket.waitForType("error")).toMatchObject({ code: "session_busy" });
    const http = await call("POST", `/context/sessions/${id}/messages`, { content: "third" });
    expect((http.json as ErrorBody).error.code).toBe("session_busy");
    await socket.waitForType("turn_completed");
    expect((await getSession(id)).conversation.map((m) => m.content)).toEqual([`first ${script.marker}`, "slow"]);
    socket.close();
  });

  it("cancels a running turn cleanly, recorded as cancelled", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const id = await createSession();
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `think ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("turn_started");
    socket.send({ type: "cancel" });
    const done = await socket.waitForType("turn_completed");
    expect(done.response).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
    const session = await getSession(id);
    expect(session.status).toBe("idle");
    expect(session.turns.map((t) => t.status)).toEqual(["cancelled"]);
    socket.close();
  });

  it("cancels a turn that waits for approval", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [{ name: "workspace_write_file", arguments: '{"path":"a.txt","content":"A"}' }],
      },
    ]);
    const id = await createSession("workspace");
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `write ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("approval_required");
    socket.send({ type: "cancel" });
    expect((await socket.waitForType("turn_completed")).response).toMatchObject({ status: "cancelled" });
    expect((await getSession(id)).pendingToolCalls).toEqual([]);
    socket.close();
  });
});

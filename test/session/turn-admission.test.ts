// The session's one admission (src/session/turn-admission.ts) seen from its doors: a refusal is the same code and
// message, with the same status, on REST, SSE, the WebSocket and the agent's chat completions, Responses and Messages
// doors (the Messages door in Anthropic's shape); and a message is admitted with the one reasoner that then runs it.
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentReasoner } from "../../src/agent/agent-reasoner";
import { FrameHub } from "../../src/session/frame-hub";
import { ReasonerFactory } from "../../src/session/reasoner-factory";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession, type ErrorBody, getSession } from "../fixtures/sessions";
import { openSocket, type TestSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { modeOnRoute, toUpstreamA } from "../routing/fixtures";

/** A 1x1 PNG, base64. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const png = { name: "dot.png", mediaType: "image/png", data: PNG };

interface Refused {
  status: number;
  code: string;
  message: string;
}

/** A message over REST, as JSON or (`sse`) as a stream: its refusal's status, code and message. */
async function postMessage(sessionId: string, body: unknown, sse = false): Promise<Refused> {
  const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: {
      ...authHeaders(TEST_KEYS.chat.key),
      "content-type": "application/json",
      ...(sse ? { accept: "text/event-stream" } : {}),
    },
    body: JSON.stringify(body),
  });
  const { error } = (await response.json()) as ErrorBody;
  return { status: response.status, code: error.code, message: error.message };
}

/** A message to one of the agent's doors on the session (`/agent/v1/<path>`): its refusal's status and error. */
async function agentDoor(sessionId: string, path: string, body: unknown) {
  const response = await exports.default.fetch(`http://aptix.test/agent/v1/${path}`, {
    method: "POST",
    headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", "x-aptix-session": sessionId },
    body: JSON.stringify(body),
  });
  const { error } = (await response.json()) as { error: { code?: string; type: string; message: string } };
  return {
    status: response.status,
    ...(error.code ? { code: error.code } : { type: error.type }),
    message: error.message,
  };
}

/** A user message on the socket: the error frame it is answered with. */
async function socketRefusal(socket: TestSocket, body: Record<string, unknown>) {
  const from = socket.frames.length;
  socket.send({ type: "user_message", ...body });
  const frame = await socket.waitForType("error", from);
  return { code: frame.code, message: frame.message };
}

describe("turn admission", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("refuses a message with the same session_busy on HTTP, SSE, the WebSocket and the agent's three doors while a turn runs", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const sessionId = await createSession();
    const socket = await openSocket(sessionId);
    socket.send({ type: "user_message", content: `think ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("turn_started");

    const http = await postMessage(sessionId, { content: "second" });
    const sse = await postMessage(sessionId, { content: "second" }, true);
    const ws = await socketRefusal(socket, { content: "second", clientMessageId: "m2" });
    const chat = await agentDoor(sessionId, "chat/completions", {
      model: "aptix-agent/general",
      messages: [{ role: "user", content: "second" }],
    });
    const responses = await agentDoor(sessionId, "responses", { model: "aptix-agent/general", input: "second" });
    const messages = await agentDoor(sessionId, "messages", {
      model: "aptix-agent/general",
      max_tokens: 64,
      messages: [{ role: "user", content: "second" }],
    });

    const busy = { code: "session_busy", message: "The session is running a turn; wait for it to finish." };
    expect({ http, sse, ws, chat, responses }).toEqual({
      http: { status: 409, ...busy },
      sse: { status: 409, ...busy },
      ws: busy,
      chat: { status: 409, ...busy },
      responses: { status: 409, ...busy },
    });
    // The Messages door answers in Anthropic's error shape, which has no code: the same status and message.
    expect(messages).toEqual({ status: 409, type: "invalid_request_error", message: busy.message });
    socket.send({ type: "cancel" });
    await socket.waitForType("turn_completed");
    expect((await getSession(sessionId)).conversation.map((m) => m.content)).toEqual([`think ${script.marker}`]);
    socket.close();
  });

  it("refuses an image on a mode that reads none with the same attachment_not_accepted on HTTP, SSE and the WebSocket", async () => {
    const sessionId = await createSession();
    const socket = await openSocket(sessionId);
    const body = { content: "what is this?", attachments: [png] };

    const http = await postMessage(sessionId, body);
    const sse = await postMessage(sessionId, body, true);
    const ws = await socketRefusal(socket, { ...body, clientMessageId: "m1" });

    const refused = { code: "attachment_not_accepted", message: "The mode's model does not accept images." };
    expect({ http, sse, ws }).toEqual({
      http: { status: 400, ...refused },
      sse: { status: 400, ...refused },
      ws: refused,
    });
    expect((await getSession(sessionId)).conversation).toEqual([]);
    socket.close();
  });

  it("refuses a message with the same session_awaiting_input on HTTP, SSE and the WebSocket while approvals wait", async () => {
    const write = { name: "workspace_write_file", arguments: '{"path":"a.txt","content":"A"}' };
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const sessionId = await createSession("workspace");
    const socket = await openSocket(sessionId);
    socket.send({ type: "user_message", content: `write ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("approval_required");

    const http = await postMessage(sessionId, { content: "next" });
    const sse = await postMessage(sessionId, { content: "next" }, true);
    const ws = await socketRefusal(socket, { content: "next", clientMessageId: "m2" });

    const waiting = {
      code: "session_awaiting_input",
      message:
        "The session is waiting for approval of its pending tool calls; answer them before sending a new message.",
    };
    expect({ http, sse, ws }).toEqual({
      http: { status: 409, ...waiting },
      sse: { status: 409, ...waiting },
      ws: waiting,
    });
    socket.close();
  });

  it("streams a message with an image over SSE with one reasoner, which checks the image once", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "A dot." }]);
    const sessionId = await createSession(await modeOnRoute(await toUpstreamA({ inputModalities: ["text", "image"] })));
    const reasoners = vi.spyOn(ReasonerFactory.prototype, "reasoner");
    const imageChecks = vi.spyOn(AgentReasoner.prototype, "attachmentRefusal");
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: `what is this? ${script.marker}`, attachments: [png] }),
    });
    const events = (await response.text())
      .split("\n")
      .filter((line) => line.startsWith("event: "))
      .map((line) => line.slice("event: ".length));
    expect(events.at(-1)).toBe("turn_completed");
    expect([reasoners.mock.calls.length, imageChecks.mock.calls.length, (await script.requests()).length]).toEqual([
      1, 1, 1,
    ]);
  });

  it("gives the session back when what comes between the admission and the turn fails, so the next message runs", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Here now." }]);
    const sessionId = await createSession();
    vi.spyOn(FrameHub.prototype, "openEventStream").mockImplementationOnce(() => {
      throw new Error("the stream could not open");
    });
    const failed = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: "first" }),
    });
    await failed.body?.cancel();
    const next = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json" },
      body: JSON.stringify({ content: `again ${script.marker}` }),
    });
    const answer = (await next.json()) as { status: string; text: string };
    expect([failed.status, next.status, answer.status, answer.text]).toEqual([500, 200, "completed", "Here now."]);
  });
});

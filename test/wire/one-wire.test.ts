// The one wire module: the console's list of logged frames is the server's, and REST and the socket refuse a
// body the same way, since both parse it with the same schema.
import { describe, expect, it } from "vitest";
import { LOGGED_FRAME_TYPES as CONSOLE_LOGGED_FRAMES } from "../../public/js/frames.js";
import { CLIENT_FRAME_TYPES, LOGGED_FRAME_TYPES } from "../../src/wire/frames";
import { ClientToolResult } from "../../src/wire/session";
import { createSession, type ErrorBody, sendMessage, sendToolResults } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

/** A session whose turn waits for a client's read. */
async function waitingForRead(): Promise<{ id: string; callId: string }> {
  const script = await scriptUpstream([
    { type: "completion", toolCalls: [{ name: "workspace_read_file", arguments: '{"path":"a.md"}' }] },
  ]);
  const id = await createSession("workspace");
  const paused = await sendMessage(id, `read ${script.marker}`);
  return { id, callId: paused.toolCalls[0]?.id ?? "" };
}

describe("the wire", () => {
  it("gives the console the server's list of logged frames", () => {
    expect([...CONSOLE_LOGGED_FRAMES]).toEqual(LOGGED_FRAME_TYPES);
  });

  it("derives the client frame types from the frame schemas", () => {
    expect(CLIENT_FRAME_TYPES).toEqual([
      "user_message",
      "approval",
      "tool_results",
      "elicitation_response",
      "cancel",
      "resume",
      "ping",
    ]);
  });

  it("refuses the same oversize error message over REST and over the socket, naming the same field the same way", async () => {
    const { id, callId } = await waitingForRead();
    const result = { toolCallId: callId, errorMessage: "e".repeat(10_001) };
    const rest = await sendToolResults(id, [result]);
    const socket = await openSocket(id);
    const from = socket.frames.length;
    socket.send({ type: "tool_results", results: [result] });
    const frame = await socket.waitForType("error", from);
    socket.close();
    const restError = (rest.json as ErrorBody).error;
    expect([rest.status, restError.param]).toEqual([400, "results.0.errorMessage"]);
    const detail = (message: string) => message.slice(message.indexOf(": ") + 2);
    expect(restError.message.startsWith("Invalid 'results.0.errorMessage' in the request body: ")).toBe(true);
    expect(String(frame.message).startsWith("Invalid 'results.0.errorMessage' in the tool_results frame: ")).toBe(true);
    expect(detail(String(frame.message))).toBe(detail(restError.message));
  });

  it("bounds a tool result by the body that carries it (MAX_TOOL_RESULT_BYTES), not by a length of its own", () => {
    const resultJson = JSON.stringify("x".repeat(11 * 1024 * 1024));
    const parsed = ClientToolResult.safeParse({ toolCallId: "call_1", resultJson });
    expect(parsed.success).toBe(true);
  });
});

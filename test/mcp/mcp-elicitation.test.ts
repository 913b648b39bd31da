// Elicitation: the reference server's trigger-elicitation-request asks the user for input mid-call. The turn
// waits in place (`awaiting_input`, with the question and its schema), the answer comes over HTTP or the
// socket, is checked against the schema, and the call goes on with it.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { authHeaders } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode, oddUrl, registerServer, toolOf } from "./fixtures";

/** A session whose turn waits for the answer to the reference server's question. */
async function askedSession(timeoutMs?: number) {
  const server = await registerServer(timeoutMs ? { timeoutMs } : {});
  const script = await scriptUpstream([
    { type: "completion", toolCalls: [{ name: toolOf(server, "trigger-elicitation-request"), arguments: "{}" }] },
    { type: "completion", content: "thanks" },
  ]);
  const id = await createSession(await mcpMode([`mcp:${server}`]));
  const asked = await sendMessage(id, `ask me ${script.marker}`);
  return { id, server, asked, script };
}

function answer(id: string, elicitationId: string, body: unknown) {
  return call("POST", `/context/sessions/${id}/elicitations/${elicitationId}`, body);
}

describe("MCP elicitation", () => {
  it("answers awaiting_input with the server's question, its tool and its schema", async () => {
    const { server, asked } = await askedSession();
    expect(asked.status).toBe("awaiting_input");
    expect(asked.elicitation).toMatchObject({
      toolCallId: asked.toolCalls[0]?.id,
      server,
      tool: "trigger-elicitation-request",
      message: "Please provide inputs for the following fields:",
      requestedSchema: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
    });
  });

  it("shows the waiting question in the session", async () => {
    const { id, asked } = await askedSession();
    const session = await getSession(id);
    expect(session.pendingElicitation?.elicitationId).toBe(asked.elicitation?.elicitationId);
    expect(session.status).toBe("running");
  });

  it("resumes the call with an accepted answer and completes the turn", async () => {
    const { id, asked } = await askedSession();
    const { status, json } = await answer(id, asked.elicitation?.elicitationId ?? "", {
      action: "accept",
      content: { name: "Ada Lovelace", check: true, integer: 7 },
    });
    expect(status).toBe(200);
    const done = json as AgentExecuteResponse;
    expect(done.status).toBe("completed");
    expect(JSON.parse(done.toolCalls[0]?.resultJson ?? "{}").text).toContain("- Name: Ada Lovelace");
  });

  it("tells the server the user declined", async () => {
    const { id, asked } = await askedSession();
    const { json } = await answer(id, asked.elicitation?.elicitationId ?? "", { action: "decline" });
    const done = json as AgentExecuteResponse;
    expect(JSON.parse(done.toolCalls[0]?.resultJson ?? "{}").text).toContain("User declined");
  });

  it("refuses an accepted answer that lacks a required field, naming it, and keeps waiting", async () => {
    const { id, asked } = await askedSession();
    const { status, json } = await answer(id, asked.elicitation?.elicitationId ?? "", {
      action: "accept",
      content: { check: true },
    });
    expect(status).toBe(400);
    expect((json as ErrorBody).error).toMatchObject({ code: "invalid_elicitation_answer", param: "content.name" });
    expect((await getSession(id)).pendingElicitation?.elicitationId).toBe(asked.elicitation?.elicitationId);
  });

  it("refuses a field of the wrong type, naming it", async () => {
    const { id, asked } = await askedSession();
    const { status, json } = await answer(id, asked.elicitation?.elicitationId ?? "", {
      action: "accept",
      content: { name: "A", integer: "seven" },
    });
    expect(status).toBe(400);
    expect((json as ErrorBody).error.param).toBe("content.integer");
  });

  it("refuses an answer to a question that is not waiting", async () => {
    const { id } = await askedSession();
    const { status, json } = await answer(id, "elicit_nope", { action: "cancel" });
    expect(status).toBe(409);
    expect((json as ErrorBody).error.code).toBe("elicitation_not_pending");
  });

  it("refuses a new message while the question waits", async () => {
    const { id } = await askedSession();
    const { status, json } = await call("POST", `/context/sessions/${id}/messages`, { content: "another" });
    expect(status).toBe(409);
    expect((json as ErrorBody).error.code).toBe("session_awaiting_input");
  });

  it("does not count the time the user takes against the server's timeout", async () => {
    const { id, asked } = await askedSession(300);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const { json } = await answer(id, asked.elicitation?.elicitationId ?? "", {
      action: "accept",
      content: { name: "Late" },
    });
    const done = json as AgentExecuteResponse;
    expect(done.toolCalls[0]?.errorMessage).toBeNull();
    expect(JSON.parse(done.toolCalls[0]?.resultJson ?? "{}").text).toContain("- Name: Late");
  });

  it("is asked and answered over the socket", async () => {
    const server = await registerServer();
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: toolOf(server, "trigger-elicitation-request"), arguments: "{}" }] },
      { type: "completion", content: "thanks" },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `ask ${script.marker}`, clientMessageId: "m1" });
    const asked = await socket.waitForType("elicitation_required");
    const elicitationId = (asked.elicitation as { elicitationId: string }).elicitationId;
    socket.send({ type: "elicitation_response", elicitationId, action: "accept", content: { name: "Socket" } });
    const answered = await socket.waitForType("elicitation_answered");
    const done = await socket.waitForType("turn_completed");
    socket.close();
    expect(answered).toMatchObject({ elicitationId, action: "accept" });
    const response = done.response as AgentExecuteResponse;
    expect(response.status).toBe("completed");
    expect(JSON.parse(response.toolCalls[0]?.resultJson ?? "{}").text).toContain("- Name: Socket");
  });

  it("declines a second question the server asks while the first waits", async () => {
    const server = await registerServer({ url: oddUrl() });
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: toolOf(server, "ask-twice"), arguments: "{}" }] },
      { type: "completion", content: "thanks" },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    const asked = await sendMessage(id, `ask twice ${script.marker}`);
    expect(asked.status).toBe("awaiting_input");
    const { json } = await answer(id, asked.elicitation?.elicitationId ?? "", {
      action: "accept",
      content: { answer: "yes" },
    });
    const done = json as AgentExecuteResponse;
    expect(done.status).toBe("completed");
    const actions = JSON.parse(done.toolCalls[0]?.resultJson ?? "{}")
      .text.split(",")
      .sort();
    expect(actions).toEqual(["accept", "decline"]);
  });

  it("refuses a streamed message while the question waits, as it does a plain one", async () => {
    const { id } = await askedSession();
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
      method: "POST",
      headers: { ...authHeaders(), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: "another" }),
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as ErrorBody).error.code).toBe("session_awaiting_input");
  });

  it("answers cancel to the server when the turn is cancelled", async () => {
    const server = await registerServer();
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: toolOf(server, "trigger-elicitation-request"), arguments: "{}" }] },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `ask ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("elicitation_required");
    socket.send({ type: "cancel" });
    const answered = await socket.waitForType("elicitation_answered");
    const done = await socket.waitForType("turn_completed");
    socket.close();
    expect(answered.action).toBe("cancel");
    expect((done.response as AgentExecuteResponse).status).toBe("cancelled");
  });
});

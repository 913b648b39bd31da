// MCP calls under the loop's rules: approval per the server's policy (readOnlyHint honoured), the approval
// shown with its server and tool, the server's timeout, and a cancelled turn cancelling the MCP request.
import { describe, expect, it } from "vitest";
import { approve, createSession, sendMessage } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode, registerServer, toolOf } from "./fixtures";

async function turnCalling(server: string, tool: string, args: unknown, tools?: string[], approvalTools?: string[]) {
  const script = await scriptUpstream([
    { type: "completion", toolCalls: [{ name: toolOf(server, tool), arguments: JSON.stringify(args) }] },
    { type: "completion", content: "done" },
  ]);
  const id = await createSession(await mcpMode(tools ?? [`mcp:${server}`], approvalTools));
  return { id, script, response: await sendMessage(id, `go ${script.marker}`) };
}

describe("MCP approvals", () => {
  it("waits for approval of every call to a server whose policy is always", async () => {
    const server = await registerServer({ approval: "always" });
    const { response } = await turnCalling(server, "echo", { message: "x" });
    expect(response.status).toBe("awaiting_approval");
    expect(response.toolCalls[0]).toMatchObject({ approval: "pending", mcp: { server, tool: "echo" } });
  });

  it("runs an approved call and gives its result to the model", async () => {
    const server = await registerServer({ approval: "always" });
    const { id, response } = await turnCalling(server, "echo", { message: "approved" });
    const { status, json } = await approve(id, [{ toolCallId: response.toolCalls[0]?.id ?? "", approved: true }]);
    expect(status).toBe(200);
    const done = json as typeof response;
    expect(done.status).toBe("completed");
    expect(JSON.parse(done.toolCalls[0]?.resultJson ?? "{}").text).toBe("Echo: approved");
  });

  it("runs a read-only tool without approval under unless_read_only", async () => {
    const server = await registerServer({ approval: "unless_read_only" });
    const { response } = await turnCalling(server, "echo", { message: "x" });
    expect(response.status).toBe("completed");
    expect(response.toolCalls[0]?.requiresApproval).toBe(false);
  });

  it("waits for approval of a tool that is not read-only under unless_read_only", async () => {
    const server = await registerServer({ approval: "unless_read_only" });
    const { response } = await turnCalling(server, "toggle-simulated-logging", {});
    expect(response.status).toBe("awaiting_approval");
  });

  it("waits for approval of a tool the mode names in approvalRequiredTools by its mcp: reference", async () => {
    const server = await registerServer({ approval: "never" });
    const { response } = await turnCalling(
      server,
      "get-sum",
      { a: 1, b: 2 },
      [`mcp:${server}`],
      [`mcp:${server}/get-sum`],
    );
    expect(response.status).toBe("awaiting_approval");
  });

  it("shows the server and tool in the approval_required frame", async () => {
    const server = await registerServer({ approval: "always" });
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: toolOf(server, "echo"), arguments: '{"message":"f"}' }] },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `go ${script.marker}`, clientMessageId: "m1" });
    const frame = await socket.waitForType("approval_required");
    socket.close();
    expect((frame.toolCalls as { mcp?: unknown }[])[0]?.mcp).toEqual({ server, tool: "echo" });
  });
});

describe("MCP limits", () => {
  it("fails a call the server does not answer within its timeout, and the turn goes on", async () => {
    const server = await registerServer({ timeoutMs: 500 });
    const { response } = await turnCalling(server, "trigger-long-running-operation", { duration: 5, steps: 5 });
    expect(response.status).toBe("completed");
    expect(response.toolCalls[0]?.errorMessage).toBe(
      `MCP tool '${server}/trigger-long-running-operation' did not answer within 500 ms.`,
    );
  });

  it("cancels the MCP request when the turn is cancelled", async () => {
    const server = await registerServer();
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [
          { name: toolOf(server, "trigger-long-running-operation"), arguments: '{"duration":10,"steps":10}' },
        ],
      },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `go ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("tool_call_started");
    socket.send({ type: "cancel" });
    const done = await socket.waitForType("turn_completed");
    socket.close();
    const response = done.response as { status: string; toolCalls: { errorMessage: string | null }[] };
    expect(response.status).toBe("cancelled");
    expect(response.toolCalls[0]?.errorMessage).toBe(
      `MCP tool '${server}/trigger-long-running-operation' was cancelled with the turn.`,
    );
  });
});

// The transcripts of docs/agent-session.md and docs/mcp.md, replayed as `npm start` serves them (the offline demo model, the dev key's
// scopes): every documented answer, tool call ids included, comes back the same on a fresh session.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { newChatKey, type TestKey } from "../passthrough/harness";

async function post(key: TestKey, path: string, body: unknown): Promise<AgentExecuteResponse> {
  const response = await exports.default.fetch(`http://localhost${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as AgentExecuteResponse;
}

async function newSession(key: TestKey): Promise<string> {
  return ((await post(key, "/context/sessions", {})) as unknown as { sessionId: string }).sessionId;
}

const say = (key: TestKey, id: string, content: string) => post(key, `/context/sessions/${id}/messages`, { content });

describe("docs/agent-session.md's transcript", () => {
  it("lists the modes, proposes the Workspace mode, switches, reads a file and writes one after approval", async () => {
    const key = await newChatKey("org-a", ["chat", "admin"]);
    const id = await newSession(key);

    const modes = await say(key, id, "what modes are there?");
    expect(modes).toMatchObject({ status: "completed", mode: "general", iterations: 2 });
    expect(modes.text).toMatch(
      /^\[offline demo model\] These modes are available:\n- \*\*General Chat\*\* \(`general`\): /,
    );
    expect(modes.toolCalls.map((c) => [c.id, c.name, c.argumentsJson])).toEqual([
      ["demo_call_1", "agent_list_modes", '{"includeExamples":true}'],
    ]);

    const proposal = await say(key, id, "I want to work on my files");
    expect(proposal).toMatchObject({ status: "completed", mode: "general", toolCalls: [], iterations: 1 });
    expect(proposal.text).toBe(
      "[offline demo model] It seems like what you are asking for would be better served by **Workspace** mode (key `workspace`). Would you like to: 1) Stay in the current mode, 2) Switch this session to **Workspace**, or 3) Switch to **Workspace** and start a new session for this work?",
    );

    const switched = await say(key, id, "2");
    expect(switched).toMatchObject({
      status: "completed",
      mode: "workspace",
      text: "[offline demo model] Done: the session is now in the workspace mode.",
    });
    expect(switched.toolCalls.map((c) => [c.id, c.name])).toEqual([["demo_call_2", "agent_change_mode"]]);

    const read = await say(key, id, "read README.md");
    expect(read).toMatchObject({ status: "awaiting_client", mode: "workspace", text: "" });
    expect(read.toolCalls.map((c) => [c.id, c.name, c.requiresClientExecution, c.resultJson])).toEqual([
      ["demo_call_3", "workspace_read_file", true, '{"action":"read_file","path":"README.md","maxBytes":262144}'],
    ]);

    const done = await post(key, `/context/sessions/${id}/tool-results`, {
      results: [
        { toolCallId: "demo_call_3", resultJson: '{"path":"README.md","content":"# My project\\nIt does things."}' },
      ],
    });
    expect(done).toMatchObject({
      status: "completed",
      mode: "workspace",
      text: "[offline demo model] README.md has 28 characters. It begins:\n\n# My project\nIt does things.",
    });

    const write = await say(key, id, "write notes.txt with hello");
    expect(write.toolCalls.map((c) => [c.id, c.approval])).toEqual([["demo_call_4", "pending"]]);
    const approved = await post(key, `/context/sessions/${id}/approvals`, {
      decisions: [{ toolCallId: "demo_call_4", approved: true }],
    });
    expect(approved.status).toBe("awaiting_client");
    const written = await post(key, `/context/sessions/${id}/tool-results`, {
      results: [{ toolCallId: "demo_call_4", resultJson: '{"path":"notes.txt","bytesWritten":5}' }],
    });
    expect(written.text).toBe("[offline demo model] Wrote 5 bytes to notes.txt.");

    const refused = await say(key, id, "write ../../etc/passwd with x");
    expect(refused.status).toBe("completed");
    expect(refused.toolCalls[0]?.errorMessage).toMatch(/^WorkspaceWriteFileTool refused the path: /);
  });

  it("numbers the demo's tool calls per session, so each new session starts at demo_call_1", async () => {
    const key = await newChatKey();
    const first = await say(key, await newSession(key), "say hello to Dana");
    const second = await say(key, await newSession(key), "say hello to Dana");
    expect([first.toolCalls[0]?.id, second.toolCalls[0]?.id]).toEqual(["demo_call_1", "demo_call_1"]);
  });

  it("waits for approval of a write, hands the approved write to the client, and answers its result", async () => {
    const key = await newChatKey();
    const id = await newSession(key);
    await say(key, id, "I want to work on my files");
    await say(key, id, "2");
    const paused = await say(key, id, "write notes.txt with hello");
    expect(paused).toMatchObject({ status: "awaiting_approval", mode: "workspace" });
    expect(paused.toolCalls.map((c) => [c.id, c.name, c.approval])).toEqual([
      ["demo_call_2", "workspace_write_file", "pending"],
    ]);

    const approved = await post(key, `/context/sessions/${id}/approvals`, {
      decisions: [{ toolCallId: "demo_call_2", approved: true }],
    });
    expect(approved.status).toBe("awaiting_client");
    expect(approved.toolCalls.map((c) => [c.id, c.approval, c.resultJson])).toEqual([
      ["demo_call_2", "approved", '{"action":"write_file","path":"notes.txt","content":"hello","bytes":5}'],
    ]);

    const written = await post(key, `/context/sessions/${id}/tool-results`, {
      results: [{ toolCallId: "demo_call_2", resultJson: '{"path":"notes.txt","bytesWritten":5}' }],
    });
    expect(written).toMatchObject({
      status: "completed",
      text: "[offline demo model] Wrote 5 bytes to notes.txt.",
    });
  });
});

describe("docs/mcp.md's offline transcript", () => {
  it("registers the reference server, offers it in a mode, and the demo model calls the tool the user names", async () => {
    const key = await newChatKey("org-a", ["chat", "admin"]);
    const put = async (path: string, body: unknown) => {
      const response = await exports.default.fetch(`http://localhost${path}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBe(201);
    };
    const server = `everything${crypto.randomUUID().slice(0, 6)}`;
    await put(`/admin/mcp-servers/${server}`, {
      url: env.TEST_MCP_EVERYTHING_URL,
      description: "The MCP reference server.",
      approval: "unless_read_only",
      tools: ["echo", "get-sum", "get-tiny-image", "trigger-elicitation-request"],
    });
    const mode = `tools${crypto.randomUUID().slice(0, 6)}`;
    await put(`/admin/modes/${mode}`, {
      displayName: "Tools",
      description: "The reference MCP server's tools.",
      systemPrompt: "Use the tools the user names.",
      tools: [`mcp:${server}`],
    });
    const id = ((await post(key, "/context/sessions", { mode })) as unknown as { sessionId: string }).sessionId;

    const sum = await say(key, id, "use get-sum with 2 and 40");
    expect(sum.toolCalls.map((c) => [c.id, c.name, c.argumentsJson, c.mcp])).toEqual([
      ["demo_call_1", `${server}__get_sum`, '{"a":2,"b":40}', { server, tool: "get-sum" }],
    ]);
    expect(sum).toMatchObject({
      status: "completed",
      text: `[offline demo model] The tool ${server}__get_sum answered: The sum of 2 and 40 is 42.`,
    });

    const asked = await say(key, id, "trigger elicitation request please");
    expect(asked).toMatchObject({ status: "awaiting_approval" });
    const waiting = await post(key, `/context/sessions/${id}/approvals`, {
      decisions: [{ toolCallId: "demo_call_2", approved: true }],
    });
    expect(waiting.status).toBe("awaiting_input");
    const answered = await post(key, `/context/sessions/${id}/elicitations/${waiting.elicitation?.elicitationId}`, {
      action: "accept",
      content: { name: "Dana" },
    });
    expect(answered.status).toBe("completed");
    expect(answered.text).toContain("- Name: Dana");
  });
});

// The agent as an MCP server, driven by the official MCP SDK's client over Streamable HTTP: its tools (modes,
// a session, a turn, approvals, client results), errors as isError results, and transcripts as resources.

import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode, registerServer, toolOf } from "../mcp/fixtures";

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(key: string = TEST_KEYS.chat.key): Promise<Client> {
  const client = new Client({ name: "test", version: "1" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://aptix.test/mcp"), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: (input, init) => exports.default.fetch(input, init),
    }),
  );
  clients.push(client);
  return client;
}

type Structured = Record<string, unknown>;

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const result = CallToolResultSchema.parse(await client.callTool({ name, arguments: args }));
  return { ...result, structured: (result.structuredContent ?? {}) as Structured };
}

describe("the agent as an MCP server", () => {
  it("lists its tools with schemas and annotations", async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "decide_approvals",
      "list_modes",
      "send_message",
      "start_session",
      "submit_tool_results",
    ]);
    expect(tools.find((t) => t.name === "list_modes")?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "send_message")?.inputSchema.required).toEqual(["sessionId", "content"]);
  });

  it("lists the modes", async () => {
    const { structured } = await callTool(await connect(), "list_modes", {});
    expect((structured.modes as { key: string }[]).map((m) => m.key)).toEqual(
      expect.arrayContaining(["general", "workspace"]),
    );
  });

  it("starts a session and runs a turn in it", async () => {
    const client = await connect();
    const started = await callTool(client, "start_session", { mode: "general" });
    const sessionId = String(started.structured.sessionId);
    const script = await scriptUpstream([{ type: "completion", content: "Hello over MCP." }]);
    const turn = await callTool(client, "send_message", { sessionId, content: `hi ${script.marker}` });
    expect(turn.isError).toBeFalsy();
    expect(turn.structured).toMatchObject({ sessionId, status: "completed", text: "Hello over MCP." });
  });

  it("reports a model failure's cause and the upstream's Retry-After in an isError result", async () => {
    const client = await connect();
    const sessionId = String((await callTool(client, "start_session", { mode: "general" })).structured.sessionId);
    const limited = (seconds: string) =>
      ({
        type: "error",
        status: 429,
        body: { error: { message: "Rate limit reached.", type: "requests", code: "rate_limit_exceeded" } },
        headers: { "retry-after": seconds },
      }) as const;
    const script = await scriptUpstream([limited("0"), limited("0"), limited("7")]);
    const turn = await callTool(client, "send_message", { sessionId, content: `hi ${script.marker}` });
    expect(turn.isError).toBe(true);
    expect(turn.structured.error).toEqual({
      code: "model_rate_limited",
      message: "The model service is rate limiting this server; try again in a minute.",
      retryAfterSeconds: 7,
    });
  });

  it("says what waits for approval, and takes the decision", async () => {
    const client = await connect();
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const sessionId = String((await callTool(client, "start_session", { mode })).structured.sessionId);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
      { type: "completion", content: "Greeted." },
    ]);
    const paused = await callTool(client, "send_message", { sessionId, content: `greet ${script.marker}` });
    const waiting = paused.structured.awaitingApproval as { toolCallId: string; name: string }[];
    expect(waiting.map((w) => w.name)).toEqual(["agent_hello_world"]);
    const decided = await callTool(client, "decide_approvals", {
      sessionId,
      decisions: [{ toolCallId: waiting[0]?.toolCallId, approved: true }],
    });
    expect(decided.structured).toMatchObject({ status: "completed", text: "Greeted." });
  });

  it("hands a client-executed call over and takes its result", async () => {
    const client = await connect();
    const sessionId = String((await callTool(client, "start_session", { mode: "workspace" })).structured.sessionId);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "workspace_read_file", arguments: '{"path":"a.md"}' }] },
      { type: "completion", content: "Read it." },
    ]);
    const paused = await callTool(client, "send_message", { sessionId, content: `read ${script.marker}` });
    const waiting = paused.structured.awaitingResults as { toolCallId: string; request: string }[];
    expect(JSON.parse(waiting[0]?.request ?? "{}")).toMatchObject({ action: "read_file", path: "a.md" });
    const done = await callTool(client, "submit_tool_results", {
      sessionId,
      results: [{ toolCallId: waiting[0]?.toolCallId, resultJson: '{"path":"a.md","content":"# A"}' }],
    });
    expect(done.structured).toMatchObject({ status: "completed", text: "Read it." });
  });

  it("answers an unknown mode as an isError result naming the known ones", async () => {
    const result = await callTool(await connect(), "start_session", { mode: "nope" });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("Known modes");
  });

  it("answers another org's session as not found", async () => {
    const sessionId = String((await callTool(await connect(), "start_session", {})).structured.sessionId);
    const result = await callTool(await connect(TEST_KEYS.otherOrg.key), "send_message", { sessionId, content: "hi" });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("not found");
  });

  it("lists the caller's sessions as resources and reads a transcript", async () => {
    const client = await connect();
    const sessionId = String((await callTool(client, "start_session", {})).structured.sessionId);
    const script = await scriptUpstream([{ type: "completion", content: "Noted." }]);
    await callTool(client, "send_message", { sessionId, content: `remember ${script.marker}` });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`aptix://sessions/${sessionId}`);
    const read = await client.readResource({ uri: `aptix://sessions/${sessionId}` });
    const text = String((read.contents[0] as { text?: string }).text);
    expect(text).toContain(`**You:** remember ${script.marker}`);
    expect(text).toContain("**Agent:** Noted.");
  });

  it("completes a session id from its first characters, among the caller's sessions only", async () => {
    const sessionId = String((await callTool(await connect(), "start_session", {})).structured.sessionId);
    const ask = async (key?: string) => {
      const client = await connect(key);
      const { completion } = await client.complete({
        ref: { type: "ref/resource", uri: "aptix://sessions/{sessionId}" },
        argument: { name: "sessionId", value: sessionId.slice(0, 10) },
      });
      return completion.values;
    };
    expect(await ask()).toContain(sessionId);
    expect(await ask(TEST_KEYS.otherOrg.key)).not.toContain(sessionId);
  });

  it("says which question of an MCP server a turn waits for, and where to answer it", async () => {
    const server = await registerServer();
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: toolOf(server, "trigger-elicitation-request"), arguments: "{}" }] },
      { type: "completion", content: "thanks" },
    ]);
    const client = await connect();
    const started = await callTool(client, "start_session", { mode: await mcpMode([`mcp:${server}`]) });
    const sessionId = String(started.structured.sessionId);
    const sent = await callTool(client, "send_message", { sessionId, content: `ask me ${script.marker}` });
    expect(sent.structured).toMatchObject({
      status: "awaiting_input",
      awaitingAnswer: { server, tool: "trigger-elicitation-request" },
    });
    const { elicitationId } = sent.structured.awaitingAnswer as { elicitationId: string };
    expect(JSON.stringify(sent.content)).toContain(`/context/sessions/${sessionId}/elicitations/${elicitationId}`);
  });

  it("refuses a request without a key", async () => {
    const response = await exports.default.fetch("http://aptix.test/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
  });
});

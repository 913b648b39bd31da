// Discovery: what a server lists becomes tools, what the registry refuses is left out with its reason in the
// server's status, and a server that is down, stopped mid-session, or misconfigured takes only its own tools
// with it; the turn runs with the rest.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import {
  admin,
  authedUrl,
  echoTokenUrl,
  getServer,
  mcpMode,
  oddUrl,
  registerServer,
  startOwnServer,
  toolOf,
} from "./fixtures";

/** The tool names the model was offered in the first request of a turn where it just answers. */
async function offeredTools(mode: string): Promise<string[]> {
  const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
  const response = await sendMessage(await createSession(mode), `hello ${script.marker}`);
  expect(response.status).toBe("completed");
  const [first] = await script.bodies();
  return ((first?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
}

async function callTool(mode: string, name: string, args: unknown, sessionId?: string) {
  const script = await scriptUpstream([
    { type: "completion", toolCalls: [{ name, arguments: JSON.stringify(args) }] },
    { type: "completion", content: "done" },
  ]);
  const id = sessionId ?? (await createSession(mode));
  const response = await sendMessage(id, `go ${script.marker}`);
  return { id, response, call: response.toolCalls[0] };
}

describe("MCP discovery", () => {
  it("records the last discovery of a server: when, how many tools, which, no error", async () => {
    const server = await registerServer({ tools: ["echo", "get-sum"] });
    await offeredTools(await mcpMode([`mcp:${server}`]));
    const { lastDiscovery } = await getServer(server);
    expect(lastDiscovery?.error).toBeNull();
    expect(lastDiscovery?.tools.sort()).toEqual([toolOf(server, "echo"), toolOf(server, "get-sum")]);
    expect(lastDiscovery?.toolCount).toBeGreaterThan(2);
    expect(Date.parse(lastDiscovery?.at ?? "")).not.toBeNaN();
  });

  it("leaves out a tool whose derived name collides with another's, with the reason in the status", async () => {
    const server = await registerServer({ url: oddUrl() });
    const offered = await offeredTools(await mcpMode([`mcp:${server}`]));
    expect(offered.filter((n) => n === toolOf(server, "get-sum"))).toHaveLength(1);
    const { lastDiscovery } = await getServer(server);
    expect(lastDiscovery?.refused).toContainEqual({
      tool: "get_sum",
      reason: expect.stringContaining(`the ToolName '${toolOf(server, "get_sum")}' is already registered`),
    });
  });

  it("leaves out a tool whose parameter has no simple JSON type, and keeps the others", async () => {
    const server = await registerServer({ url: oddUrl() });
    const offered = await offeredTools(await mcpMode([`mcp:${server}`]));
    expect(offered).not.toContain(toolOf(server, "either"));
    expect(offered).toContain(toolOf(server, "ask-model"));
    const { lastDiscovery } = await getServer(server);
    expect(lastDiscovery?.refused).toContainEqual({
      tool: "either",
      reason: expect.stringContaining("its parameter 'value' needs a simple JSON type"),
    });
  });

  it("runs the turn without the tools of a server that is down, and records why", async () => {
    const own = await startOwnServer();
    await own.stop();
    const down = await registerServer({ url: own.url });
    const up = await registerServer({ tools: ["echo"] });
    const offered = await offeredTools(await mcpMode([`mcp:${down}`, `mcp:${up}`, "agent_hello_world"]));
    expect(offered).toContain(toolOf(up, "echo"));
    expect(offered).toContain("agent_hello_world");
    expect(offered.some((n) => n.startsWith(`${down}__`))).toBe(false);
    expect((await getServer(down)).lastDiscovery?.error).toEqual(expect.any(String));
  });

  it("fails a call to a server stopped mid-session, and the turn goes on", async () => {
    const own = await startOwnServer();
    const server = await registerServer({ url: own.url, tools: ["echo"] });
    const echo = (message: string) => ({ name: toolOf(server, "echo"), arguments: JSON.stringify({ message }) });
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [echo("before")] },
      { type: "completion", content: "done" },
      { type: "completion", toolCalls: [echo("after")] },
      { type: "completion", content: "done again" },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    const first = await sendMessage(id, `go ${script.marker}`);
    expect(JSON.parse(first.toolCalls[0]?.resultJson ?? "{}").text).toBe("Echo: before");
    await own.stop();
    const second = await sendMessage(id, "and again");
    expect(second.status).toBe("completed");
    expect(second.toolCalls[0]?.errorMessage).toBe(
      `MCP tool '${server}/echo' failed: the MCP server could not be reached or broke off the call.`,
    );
  });

  it("sends the bearer token from the secret the server's authSecret names", async () => {
    const server = await registerServer({ url: authedUrl(), authSecret: "MCP_TEST_TOKEN", tools: ["echo"] });
    const { call: made } = await callTool(await mcpMode([`mcp:${server}`]), toolOf(server, "echo"), { message: "t" });
    expect(JSON.parse(made?.resultJson ?? "{}").text).toBe("Echo: t");
  });

  it("leaves out a server whose secret is not set, naming the missing secret in its status", async () => {
    const server = await registerServer({ url: authedUrl(), authSecret: "MCP_NOT_SET_TOKEN" });
    const offered = await offeredTools(await mcpMode([`mcp:${server}`, "agent_hello_world"]));
    expect(offered).toContain("agent_hello_world");
    expect(offered.some((n) => n.startsWith(`${server}__`))).toBe(false);
    expect((await getServer(server)).lastDiscovery?.error).toBe(
      `the secret MCP_NOT_SET_TOKEN that MCP server '${server}' needs is not set`,
    );
  });

  it("records why a server refused its token without the token the server quoted back, in its status and the admin list", async () => {
    const server = await registerServer({ url: echoTokenUrl(), authSecret: "MCP_TEST_TOKEN" });
    await offeredTools(await mcpMode([`mcp:${server}`]));
    const error = (await getServer(server)).lastDiscovery?.error ?? "";
    expect(error).toContain("The token '[redacted]' is not valid here.");
    expect(error).not.toContain(env.MCP_TEST_TOKEN);
    const listed = await call("GET", "/admin/mcp-servers", undefined, admin);
    expect(JSON.stringify(listed.json)).not.toContain(env.MCP_TEST_TOKEN);
  });

  it("never stores or returns the token, only the secret's name", async () => {
    const server = await registerServer({ url: authedUrl(), authSecret: "MCP_TEST_TOKEN" });
    await offeredTools(await mcpMode([`mcp:${server}`]));
    const listed = await call("GET", "/admin/mcp-servers", undefined, admin);
    expect(JSON.stringify(listed.json)).not.toContain(env.MCP_TEST_TOKEN);
    const rows = await env.DB.prepare("SELECT * FROM mcp_servers WHERE name = ?").bind(server).all();
    expect(JSON.stringify(rows.results)).not.toContain(env.MCP_TEST_TOKEN);
    expect((await getServer(server)).authSecret).toBe("MCP_TEST_TOKEN");
  });

  it("lists a server's tools again when it says its list changed, before the TTL runs out", async () => {
    const server = await registerServer({ url: oddUrl() });
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: toolOf(server, "add-tool"), arguments: "{}" }] },
      { type: "completion", content: "added" },
      { type: "completion", content: "next" },
    ]);
    const id = await createSession(await mcpMode([`mcp:${server}`]));
    await sendMessage(id, `add ${script.marker}`);
    await sendMessage(id, "what now?");
    const bodies = await script.bodies();
    const names = (body: Record<string, unknown> | undefined) =>
      ((body?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(names(bodies[0])).not.toContain(toolOf(server, "added"));
    expect(names(bodies[2])).toContain(toolOf(server, "added"));
  });

  it("declines a server's sampling request with a clear message", async () => {
    const server = await registerServer({ url: oddUrl() });
    const { call: made } = await callTool(await mcpMode([`mcp:${server}`]), toolOf(server, "ask-model"), {});
    expect(made?.errorMessage).toContain("aptix-edge declines sampling requests");
  });

  it("keeps an MCP category apart from a built-in one of the same name", async () => {
    const server = await registerServer({ tools: ["echo"], category: "workspace" });
    const mode = await mcpMode([`mcp:${server}`, "workspace_read_file"]);
    const { json } = await call("GET", `/v1/system-prompts/default/enhanced?mode=${mode}`);
    const prompt = (json as { prompt: string }).prompt;
    expect(prompt.split("#### workspace_read_file\n")).toHaveLength(2);
    expect(prompt).toContain(`### MCP: workspace\nThe MCP reference server.\n\n#### ${toolOf(server, "echo")}`);
  });

  it("shows a mode's MCP tools in the enhanced prompt, under the server's category", async () => {
    const server = await registerServer({ tools: ["echo"], description: "Echoes things." });
    const mode = await mcpMode([`mcp:${server}`]);
    const { status, json } = await call("GET", `/v1/system-prompts/default/enhanced?mode=${mode}`);
    expect(status).toBe(200);
    const enhanced = json as { prompt: string; tools: string[] };
    expect(enhanced.tools).toContain(toolOf(server, "echo"));
    expect(enhanced.prompt).toContain(`### MCP: ${server}\nEchoes things.`);
    expect(enhanced.prompt).toContain(`#### ${toolOf(server, "echo")}`);
  });
});

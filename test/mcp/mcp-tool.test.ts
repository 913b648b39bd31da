// One MCP tool as an AgentTool made with defineTool, outside the loop: its TUL-011 contract, its log line per
// call (server, tool, duration, outcome; never the arguments or the token), and its result bounded like any tool's.
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { McpConnection } from "../../src/mcp/mcp-connection";
import type { McpServerConfig } from "../../src/mcp/mcp-server-registry";
import { mcpAgentTool } from "../../src/mcp/mcp-tool";
import { TOOL_CATEGORIES } from "../../src/tools/categories";
import { AgentToolRegistry } from "../../src/tools/registry";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";
import { authedUrl } from "./fixtures";

function config(overrides: Partial<McpServerConfig> = {}): McpServerConfig {
  return {
    name: "everything",
    org: null,
    url: env.TEST_MCP_EVERYTHING_URL,
    description: "The MCP reference server.",
    authSecret: null,
    approval: "never",
    tools: null,
    timeoutMs: 30_000,
    category: null,
    enabled: true,
    lastDiscovery: null,
    createdAt: "2026-11-23T00:00:00.000Z",
    updatedAt: "2026-11-23T00:00:00.000Z",
    ...overrides,
  };
}

const connections: McpConnection[] = [];
afterAll(async () => {
  await Promise.all(connections.map((c) => c.drop()));
});

async function toolOf(name: string, overrides: Partial<McpServerConfig> = {}) {
  // The token a deployment server's authSecret names: a Worker secret.
  const token = () => (overrides.authSecret === "MCP_TEST_TOKEN" ? env.MCP_TEST_TOKEN : null);
  const connection = new McpConnection(config(overrides), token, () => {});
  connections.push(connection);
  const tool = (await connection.listTools(10_000)).find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const logger = new RecordingAdminLogger();
  const category = { id: "mcp:everything", name: "MCP: everything", description: "d", order: 1_000 };
  const redact = (text: string) => text.replaceAll(env.MCP_TEST_TOKEN, "[redacted]");
  return { logger, tool: mcpAgentTool({ connection, tool, category: category.id, logger, redact }), category };
}

describe("an MCP tool as an AgentTool", () => {
  it("passes the tool registry's TUL-011 checks under the server's category", async () => {
    const { tool, category } = await toolOf("get-sum");
    const registry = new AgentToolRegistry(new RecordingAdminLogger(), [...TOOL_CATEGORIES, category]);
    registry.registerTool(tool);
    expect(registry.getTool("everything__get_sum")?.getSchema()).toMatchObject({
      name: "everything__get_sum",
      parameters: { required: ["a", "b"], properties: { a: { type: "number" }, b: { type: "number" } } },
    });
  });

  it("logs each call with server, tool, duration and outcome, and none of its arguments", async () => {
    const { tool, logger } = await toolOf("echo");
    const result = await tool.execute('{"message":"my-secret-value"}', toolContext());
    expect(result.successful).toBe(true);
    const line = logger.events.find((e) => e.tag === "[mcp_call]");
    expect(Object.fromEntries(line?.pairs ?? [])).toMatchObject({
      server: "everything",
      tool: "echo",
      outcome: "ok",
      durationMs: expect.stringMatching(/^\d+$/),
    });
    expect(JSON.stringify(logger)).not.toContain("my-secret-value");
  });

  it("never logs the bearer token it sends", async () => {
    const { tool, logger } = await toolOf("echo", { url: authedUrl(), authSecret: "MCP_TEST_TOKEN" });
    expect((await tool.execute('{"message":"x"}', toolContext())).successful).toBe(true);
    expect(JSON.stringify(logger)).not.toContain(env.MCP_TEST_TOKEN);
  });

  it("takes arguments of only whitespace as no arguments, as its check does", async () => {
    const { tool } = await toolOf("get-tiny-image");
    expect(tool.checkArguments?.("  ")).toBeNull();
    expect((await tool.execute("  ", toolContext())).successful).toBe(true);
  });

  it("reports a call the turn cancelled, and logs it as cancelled", async () => {
    const { tool, logger } = await toolOf("trigger-long-running-operation");
    const controller = new AbortController();
    const running = tool.execute('{"duration":10,"steps":10}', toolContext(), controller.signal);
    setTimeout(() => controller.abort(new DOMException("The turn was cancelled.", "AbortError")), 50);
    const result = await running;
    expect(result.errorMessage).toBe(
      "MCP tool 'everything/trigger-long-running-operation' was cancelled with the turn.",
    );
    expect(logger.events.find((e) => e.tag === "[mcp_call]")?.message).toBe("cancelled");
  });
});

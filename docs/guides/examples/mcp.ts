// The agent as an MCP server, through the official MCP SDK's client over Streamable HTTP: list its tools, start a
// session, send it a message.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { Aptix } from "./aptix.ts";

export async function main({ url, key, fetch }: Aptix): Promise<string> {
  // A validator that compiles no code, so the same client also runs on Workers.
  const client = new Client(
    { name: "guide-example", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch,
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const started = await client.callTool({ name: "start_session", arguments: { mode: "general" } });
    const { sessionId } = started.structuredContent as { sessionId: string };
    const turn = await client.callTool({ name: "send_message", arguments: { sessionId, content: "say hello to Ada" } });
    const { text } = turn.structuredContent as { text: string };
    return `tools: ${tools.map((t) => t.name).join(", ")}\n${text}`;
  } finally {
    await client.close();
  }
}

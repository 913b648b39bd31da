// Helpers for the MCP tests: register a server (the reference server by default), a mode that offers its
// tools, and start or stop a server of one's own through the control server (test/mcp/everything-server.ts).
import { env } from "cloudflare:workers";
import type { McpServerConfig } from "../../src/mcp/mcp-server-registry";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";

/** The deployment's servers and modes (a server's token is a Worker secret): an operator's to write. */
export const admin = TEST_KEYS.operator.key;

let counter = 0;
/** A server or mode name no other test uses. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}${counter}${crypto.randomUUID().slice(0, 6)}`;
}

export interface ServerBody {
  url?: string;
  description?: string;
  authSecret?: string | null;
  approval?: "always" | "never" | "unless_read_only";
  tools?: string[] | null;
  timeoutMs?: number;
  category?: string | null;
  enabled?: boolean;
}

/** Registers a server (the shared reference server unless `url` says otherwise); returns its name. */
export async function registerServer(body: ServerBody = {}, name = uniqueName("ev")): Promise<string> {
  const { status, json } = await call(
    "PUT",
    `/admin/mcp-servers/${name}`,
    { url: env.TEST_MCP_EVERYTHING_URL, description: "The MCP reference server.", approval: "never", ...body },
    admin,
  );
  if (status !== 201 && status !== 200) throw new Error(`server not registered (${status}): ${JSON.stringify(json)}`);
  return name;
}

export async function getServer(name: string): Promise<McpServerConfig> {
  const { json } = await call("GET", "/admin/mcp-servers", undefined, admin);
  const found = (json as { servers: McpServerConfig[] }).servers.find((s) => s.name === name);
  if (!found) throw new Error(`server ${name} not listed`);
  return found;
}

/** A mode whose tools are `tools` (tool names and `mcp:` references); returns its key. */
export async function mcpMode(tools: string[], approvalRequiredTools: string[] = []): Promise<string> {
  const key = uniqueName("mcpmode");
  const { status, json } = await call(
    "PUT",
    `/admin/modes/${key}`,
    {
      displayName: "MCP test mode",
      description: "Offers tools of an MCP server.",
      systemPrompt: "Use the tools when asked.",
      tools,
      approvalRequiredTools,
    },
    admin,
  );
  if (status !== 201 && status !== 200) throw new Error(`mode not written (${status}): ${JSON.stringify(json)}`);
  return key;
}

/** Another reference server of the test's own, to stop mid-session. */
export async function startOwnServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const response = await fetch(`${env.TEST_MCP_CONTROL_URL}/instances`, { method: "POST" });
  const { id, url } = (await response.json()) as { id: string; url: string };
  return {
    url,
    stop: async () => {
      await fetch(`${env.TEST_MCP_CONTROL_URL}/instances/${id}`, { method: "DELETE" });
    },
  };
}

/** The shared reference server behind a proxy that wants `Bearer <MCP_TEST_TOKEN>`. */
export const authedUrl = () => `${env.TEST_MCP_CONTROL_URL}/authed/mcp`;

/** A server that refuses every token with a 401 quoting it back. */
export const echoTokenUrl = () => `${env.TEST_MCP_CONTROL_URL}/echo-token/mcp`;

/** A server with colliding tool names, an unusable schema and a tool that asks for sampling. */
export const oddUrl = () => `${env.TEST_MCP_CONTROL_URL}/odd/mcp`;

/** The model's name of a server's tool. */
export const toolOf = (server: string, tool: string) => `${server}__${tool.replace(/[^A-Za-z0-9_]/g, "_")}`;

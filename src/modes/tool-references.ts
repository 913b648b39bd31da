// How a mode's tool list names the tools of an MCP server rather than a built-in tool: `mcp:<server>` (every
// allowed tool of the server) or `mcp:<server>/<tool>` (one of them).

/** `mcp:<server>` (every allowed tool of the server) or `mcp:<server>/<tool>` (one of them). */
export const MCP_REFERENCE = /^mcp:([a-z][a-z0-9_-]{0,63})(?:\/([^\s/]{1,128}))?$/;

export interface McpReference {
  server: string;
  /** The server's own name of the tool, or null for all of them. */
  tool: string | null;
}

/** A mode's tool entry that names MCP tools rather than a built-in tool. */
export function isRemoteToolReference(name: string): boolean {
  return name.startsWith("mcp:");
}

export function parseMcpReference(name: string): McpReference | null {
  const match = MCP_REFERENCE.exec(name);
  return match ? { server: match[1] ?? "", tool: match[2] ?? null } : null;
}

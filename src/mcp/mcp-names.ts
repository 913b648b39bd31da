// How MCP servers and tools are named: a mode's reference to them (`mcp:<server>`, `mcp:<server>/<tool>`), and
// the tool name the model sees, derived deterministically from server and tool (`everything` + `get-sum` ->
// `everything__get_sum`) so it passes the registry's rule and the chat APIs' 64-character limit.

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

const MAX_TOOL_NAME = 64;

/** A short, stable hash of `text` (FNV-1a, 32 bits), for names that must be cut. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

/** `<server>__<tool>`, every character outside [A-Za-z0-9_] as `_`; a name over 64 characters is cut and hashed. */
export function mcpToolName(server: string, tool: string): string {
  const name = `${server}__${tool}`.replace(/[^A-Za-z0-9_]/g, "_");
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = shortHash(`${server}/${tool}`);
  return `${name.slice(0, MAX_TOOL_NAME - hash.length - 1)}_${hash}`;
}

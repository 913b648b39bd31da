// The name the model sees for an MCP server's tool, derived deterministically from server and tool (`everything`
// + `get-sum` -> `everything__get_sum`) so it passes the registry's rule and the chat APIs' 64-character limit.
// How a mode names MCP tools (`mcp:<server>[/<tool>]`) is the mode's: src/modes/tool-references.ts.

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

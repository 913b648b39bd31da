// What the model gets of an MCP tool's result: its text joined, its structured content as JSON, and for
// images, audio and resources a short note (type, size, URI), never raw base64.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface McpResultForModel {
  /** JSON: {"text", "structuredContent"?, "attachments"?}. */
  json: string;
  /** The text (for an error's message). */
  text: string;
  isError: boolean;
}

/** Bytes a base64 string decodes to. */
const decodedBytes = (base64: string) => Math.floor((base64.replace(/=+$/, "").length * 3) / 4);

function note(item: CallToolResult["content"][number]): string | null {
  switch (item.type) {
    case "text":
      return null;
    case "image":
    case "audio":
      return `${item.type} (${item.mimeType}, ${decodedBytes(item.data)} bytes; not shown to the model)`;
    case "resource_link":
      return `resource link ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ""}${item.name ? `: ${item.name}` : ""}`;
    case "resource": {
      const resource = item.resource;
      const size = "text" in resource ? `${resource.text.length} characters` : `${decodedBytes(resource.blob)} bytes`;
      return `resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType}, ${size})` : ` (${size})`}`;
    }
    default:
      return "content of a type this client does not read";
  }
}

export function resultForModel(result: CallToolResult): McpResultForModel {
  const text = result.content.flatMap((item) => (item.type === "text" ? [item.text] : [])).join("\n");
  const attachments = result.content.flatMap((item) => note(item) ?? []);
  const json = JSON.stringify({
    text,
    ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  });
  return { json, text, isError: result.isError === true };
}

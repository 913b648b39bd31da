// Content on spans, only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT opts in: prompts, completions,
// tool arguments and results, in the GenAI conventions' JSON shapes, cut to a size (the caller takes every secret the
// Worker knows out first: src/secret-redaction.ts).

import { type ChatMessage, userText } from "../../wire/openai";

/** The most characters one content attribute carries. */
export const CONTENT_CHARS = 16_384;

/** Cut to CONTENT_CHARS. */
export function bounded(text: string): string {
  return text.length > CONTENT_CHARS ? `${text.slice(0, CONTENT_CHARS)}…` : text;
}

type Part =
  | { type: "text"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_call_response"; id: string; response: string };

/** Chat messages in the GenAI conventions' input/output message shape: `[{ role, parts: [...] }]`. */
export function genAiMessages(messages: readonly ChatMessage[]): { role: string; parts: Part[] }[] {
  return messages.map((m) => {
    const parts: Part[] = [];
    // A user's message with images: its text parts (each image's naming line among them), never an image's data.
    const text = typeof m.content === "string" ? m.content : m.content == null ? "" : userText(m.content);
    if (m.role === "tool") {
      parts.push({ type: "tool_call_response", id: m.tool_call_id ?? "", response: text });
    } else if (text !== "") {
      parts.push({ type: "text", content: text });
    }
    for (const call of ("tool_calls" in m ? m.tool_calls : undefined) ?? []) {
      parts.push({ type: "tool_call", id: call.id, name: call.function.name, arguments: call.function.arguments });
    }
    return { role: m.role, parts };
  });
}

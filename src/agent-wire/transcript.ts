// The agent's OpenAI door reads a chat completions request: its messages (as every OpenAI client writes them),
// the client's tools, and where the conversation stands. A client that knows nothing of sessions resends the
// whole history each time; each message is reduced to what it means (role, text, tool calls) and chained
// into fingerprints (src/session/thread-head.ts), so a history can be matched against the transcript of a session
// we answered.
import { z } from "zod";
import { canonicalArguments, type Meaning } from "../session/thread-head";
import { TOOL_NAME_PATTERN } from "../tools/contract";
import {
  ChatCompletionRequest,
  ChatContentPart,
  ChatFunctionTool,
  type ChatTool,
  chatMessageIn,
  textOfContent,
} from "../wire/openai";

/** The door reads text: a part of another kind is refused, naming it. */
const TextPart = ChatContentPart.refine((part) => part.type === "text", {
  error: "only text parts are supported (the agent reads text)",
});

/** Every role an OpenAI client sends (the wire's messages), with text parts only. */
export const DoorMessage = chatMessageIn(TextPart);
export type DoorMessage = z.infer<typeof DoorMessage>;

/** A client's own tool: the wire's function tool, with a name the tool contract takes. */
export const DoorTool = ChatFunctionTool.extend({
  function: ChatFunctionTool.shape.function.extend({
    name: z.string().max(64).regex(TOOL_NAME_PATTERN, "must be 1 to 64 of a-z, A-Z, 0-9, '_' and '-'"),
    description: z.string().max(10_000).optional(),
  }),
});

/**
 * The request body: the wire's chat completions request, with the door's bounds (how many messages and tools);
 * `tool_choice` is not the door's to read (the agent chooses), so any value passes as every unused field does.
 */
export const AgentChatBody = ChatCompletionRequest.omit({ tool_choice: true }).extend({
  messages: z.array(DoorMessage).min(1, "needs at least one message").max(2_000),
  tools: z.array(DoorTool).max(128).nullable().optional(),
});
export type AgentChatBody = z.infer<typeof AgentChatBody>;

export function meaningOf(message: DoorMessage): Meaning {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", text: textOfContent(message.content) };
    case "user":
      return { role: "user", text: textOfContent(message.content) };
    case "assistant":
      return {
        role: "assistant",
        text: textOfContent(message.content),
        calls: (message.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: canonicalArguments(c.function.arguments),
        })),
      };
    case "tool":
      return { role: "tool", toolCallId: message.tool_call_id, text: textOfContent(message.content) };
  }
}

/** The client's tools as the model is offered them. */
export function declaredTools(body: AgentChatBody): ChatTool[] {
  return (body.tools ?? []).map((tool) => ({
    type: "function",
    function: {
      name: tool.function.name,
      description: tool.function.description ?? "",
      parameters: tool.function.parameters ?? { type: "object", properties: {} },
    },
  }));
}

/**
 * What the end of the history asks for: the trailing user messages (a message to the agent), or the trailing
 * tool messages (results of the calls the agent handed the client); and where that block starts.
 */
export type NewInput =
  | { type: "message"; content: string; from: number }
  | { type: "tool_results"; results: { toolCallId: string; text: string }[]; from: number };

export function trailingInput(meanings: readonly Meaning[]): NewInput | { problem: string; param: string } {
  let from = meanings.length;
  while (from > 0 && meanings[from - 1]?.role === meanings.at(-1)?.role) from--;
  const last = meanings.at(-1);
  if (last?.role === "user") {
    const content = meanings
      .slice(from)
      .map((m) => ("text" in m ? m.text : ""))
      .join("\n\n")
      .trim();
    if (!content)
      return { problem: "the last user message is empty", param: `messages.${meanings.length - 1}.content` };
    return { type: "message", content, from };
  }
  if (last?.role === "tool") {
    const results = meanings
      .slice(from)
      .flatMap((m) => (m.role === "tool" ? [{ toolCallId: m.toolCallId, text: m.text }] : []));
    return { type: "tool_results", results, from };
  }
  return {
    problem: "the last message must be the user's (or the results of tool calls, as role 'tool')",
    param: `messages.${meanings.length - 1}.role`,
  };
}

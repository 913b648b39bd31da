// The offline demo model: a small rule-based ChatModel that drives real tool calls with no network,
// so `npm start` shows the whole loop. Every answer says it is the offline demo model.
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ModelToolCall } from "./chat-model";

const PREFIX = "[offline demo model]";
const PROPOSAL = /better served by \*\*(.+?)\*\* mode \(key `([a-z0-9_-]+)`\)/;
const HELP =
  `${PREFIX} I am the offline demo model (set LLM_BASE_URL for a real one), so I understand only a few requests: ` +
  `"what modes are there?", "say hello to Dana", "help me write a DDR" (then answer 1, 2 or 3), and in the Workspace ` +
  `mode "read README.md" or "write notes.txt with hello".`;

type Intent = { text: string } | { tool: string; args: Record<string, unknown> };

function offeredTools(request: ChatRequest): Set<string> {
  if (request.tools) return new Set(request.tools.map((t) => t.function.name));
  const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
  return new Set([...system.matchAll(/^#### ([a-zA-Z0-9_-]+)$/gm)].map((m) => m[1] ?? ""));
}

function currentMode(request: ChatRequest): string {
  const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
  return /^## Mode: .+ \(([a-z0-9_-]+)\)$/m.exec(system)?.[1] ?? "general";
}

/** The last tool result the model was given, if the conversation ends with one. */
function lastToolResult(messages: ChatMessage[]): { name: string; content: string } | null {
  const last = messages.at(-1);
  if (last?.role === "tool") {
    const call = messages
      .flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []))
      .find((c) => c.id === last.tool_call_id);
    return { name: call?.function.name ?? "", content: last.content };
  }
  const json =
    last?.role === "user" ? /^Result of tool ([a-zA-Z0-9_-]+) \(call [^)]*\):\n([\s\S]*)$/.exec(last.content) : null;
  return json ? { name: json[1] ?? "", content: json[2] ?? "" } : null;
}

function describeResult(name: string, content: string): string {
  let value: Record<string, unknown> = {};
  try {
    value = JSON.parse(content.split("\n[truncated")[0] ?? content) as Record<string, unknown>;
  } catch {
    return `${PREFIX} The tool ${name} answered: ${content.slice(0, 300)}`;
  }
  if (typeof value.error === "string") return `${PREFIX} The tool ${name} reported an error: ${value.error}`;
  if (name === "agent_list_modes" && Array.isArray(value.modes)) {
    const lines = (value.modes as { key: string; displayName: string; description: string }[]).map(
      (m) => `- **${m.displayName}** (\`${m.key}\`): ${m.description}`,
    );
    return `${PREFIX} These modes are available:\n${lines.join("\n")}\nTell me if one of them fits your work better.`;
  }
  if (name === "agent_hello_world") return `${PREFIX} ${String(value.message)}`;
  if (name === "agent_change_mode") {
    const branch = content.match(/new session ([0-9a-f]+)/)?.[1];
    return `${PREFIX} Done: the session is now in the ${String(value.mode)} mode${branch ? `, and the new work continues in session ${branch}` : ""}.`;
  }
  if (name === "workspace_read_file") {
    const text = String(value.content ?? "");
    return `${PREFIX} ${String(value.path)} has ${text.length} characters. It begins:\n\n${text.slice(0, 400)}`;
  }
  if (name === "workspace_write_file")
    return `${PREFIX} Wrote ${String(value.bytesWritten)} bytes to ${String(value.path)}.`;
  return `${PREFIX} The tool ${name} answered: ${content.slice(0, 300)}`;
}

const PROPOSALS: [RegExp, string, string][] = [
  [/\bddr\b|design (decision )?record/, "DDR Authoring", "ddr_authoring"],
  [/\b(files?|workspace|repo(sitory)?)\b/, "Workspace", "workspace"],
];

function decide(request: ChatRequest): Intent {
  const tools = offeredTools(request);
  const result = lastToolResult(request.messages);
  if (result) return { text: describeResult(result.name, result.content) };
  const userText = [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const said = userText.replace(/\[\[script:[^\]]*\]\]/g, "").trim();
  const lower = said.toLowerCase();
  const lastAssistant = [...request.messages].reverse().find((m) => m.role === "assistant");
  const proposal = lastAssistant?.content ? PROPOSAL.exec(lastAssistant.content) : null;

  if (proposal) {
    const [, name, key] = proposal;
    if (/^\s*(1|stay)\b/.test(lower)) return { text: `${PREFIX} OK, staying in the current mode.` };
    if (/^\s*(2|switch)\b/.test(lower) || /^\s*(3|new session|branch)\b/.test(lower)) {
      const branch = /^\s*(3|new session|branch)\b/.test(lower);
      return {
        tool: "agent_change_mode",
        args: { mode: key, branch, reason: `The user chose the ${name} mode for this work.` },
      };
    }
  }
  const read = /\bread\s+(\S+)/.exec(said);
  if (read && tools.has("workspace_read_file")) return { tool: "workspace_read_file", args: { path: read[1] } };
  const write = /\bwrite\s+(\S+)(?:\s+with\s+([\s\S]+))?/.exec(said);
  if (write && tools.has("workspace_write_file")) {
    return { tool: "workspace_write_file", args: { path: write[1], content: write[2] ?? "" } };
  }
  if (/\bmodes?\b|what can you do/.test(lower) && tools.has("agent_list_modes")) {
    return { tool: "agent_list_modes", args: { includeExamples: true } };
  }
  const hello = /\b(?:hello|hi|greet)\b(?:\s+to)?\s+([A-Z][\w-]*)/.exec(said) ?? /\bsay hello to\s+(\S+)/i.exec(said);
  if (hello && tools.has("agent_hello_world")) return { tool: "agent_hello_world", args: { name: hello[1] } };
  const mode = currentMode(request);
  for (const [pattern, name, key] of PROPOSALS) {
    if (pattern.test(lower) && mode !== key) {
      return {
        text:
          `${PREFIX} It seems like what you are asking for would be better served by **${name}** mode (key \`${key}\`). ` +
          `Would you like to: 1) Stay in the current mode, 2) Switch this session to **${name}**, or ` +
          `3) Switch to **${name}** and start a new session for this work?`,
      };
    }
  }
  return { text: HELP };
}

let callCounter = 0;

export class DemoChatModel implements ChatModel {
  readonly name = "offline-demo";

  async complete(request: ChatRequest): Promise<ChatResponse> {
    request.signal?.throwIfAborted();
    const intent = decide(request);
    if ("text" in intent) {
      for (const piece of intent.text.match(/[\s\S]{1,24}/g) ?? []) request.onTextDelta?.(piece);
      return { content: intent.text, toolCalls: [], finishReason: "stop" };
    }
    const call: ModelToolCall = {
      id: `demo_call_${++callCounter}`,
      name: intent.tool,
      arguments: JSON.stringify(intent.args),
    };
    if (request.tools) return { content: null, toolCalls: [call], finishReason: "tool_calls" };
    return {
      content: JSON.stringify({ tool: intent.tool, parameters: intent.args, terminate: false }),
      toolCalls: [],
      finishReason: "stop",
    };
  }
}

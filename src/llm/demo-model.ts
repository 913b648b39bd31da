// The offline demo model: a small rule-based ChatModel that drives real tool calls with no network,
// so `npm start` shows the whole loop. Every answer says it is the offline demo model.

import { estimateTokens } from "../token-estimate";
import { type ChatMessage, type ChatTool, userText } from "../wire/openai";
import type { ChatModel, ChatRequest, ChatResponse, ModelToolCall } from "./chat-model";
import { sampleValue } from "./demo-arguments";
import { answerFromMemory, describeMemoryResult, memoryCall, promptMemories } from "./demo-memory";
import { ownName, toolForPlainWords } from "./demo-tool-words";

const PREFIX = "[offline demo model]";
const PROPOSAL = /better served by \*\*(.+?)\*\* mode \(key `([a-z0-9_-]+)`\)/;
const HELP =
  `${PREFIX} I am the offline demo model (set LLM_BASE_URL for a real one), so I understand only a few requests: ` +
  `"what modes are there?", "say hello to Dana", "help me write a DDR" (then answer 1, 2 or 3), "tell me a slow story", and in the Workspace ` +
  `mode "read README.md" or "write a.txt with hello and write b.txt with bye"; in a mode with MCP tools, name one ` +
  `("use get-sum with 2 and 40", "echo 'hi'"); any other tool of the mode answers words of its name or its ` +
  `description ("what time is it?" in a mode with clock_current_time). With memory on, "remember that my ` +
  `name is Ada", then in a new conversation "what is my name?" or "what do you know about me?".`;

/** The demo's Markdown answer (a table, code and a mermaid diagram), so the console's drawing shows offline. */
export const DEMO_TOUR = [
  `${PREFIX} Here is how aptix answers you; the console draws this Markdown.`,
  "",
  "## The path of a message",
  "",
  "| Step | Where | What happens |",
  "| --- | --- | --- |",
  "| 1 | Worker (Hono) | checks your key and finds your session |",
  "| 2 | Session object | runs the agent loop, one turn at a time |",
  "| 3 | Model route | streams the answer, failing over when a model is down |",
  "",
  "```mermaid",
  "flowchart LR",
  "  Client -->|HTTPS or WebSocket| Worker",
  "  Worker --> Session[Session object]",
  "  Session --> Model[Model route]",
  "  Session --> Tools[Tools and MCP servers]",
  "```",
  "",
  "A client of your own talks to a session like this:",
  "",
  "```js",
  "const socket = new WebSocket(`wss://${host}/context/sessions/${id}/ws?ticket=${ticket}`);",
  'socket.send(JSON.stringify({ type: "user_message", content: "hello" }));',
  "```",
].join("\n");

/**
 * A slow answer (about 12 s as it streams), to see a turn survive a restart: kill the server mid-answer and start
 * it again, and the turn resumes by itself (docs/agent-session.md, "Turns that survive a restart").
 */
export const DEMO_STORY = [
  `${PREFIX} A slow story, told a line at a time.`,
  "",
  ...Array.from(
    { length: 12 },
    (_, i) =>
      `${i + 1}. The session object logs line ${i + 1} before it sends it; cut off, the turn goes on from its last step.`,
  ),
  "",
  "The end.",
].join("\n");

/** The pause between the slow story's pieces. */
const STORY_PIECE_DELAY_MS = 250;

type Call = { tool: string; args: Record<string, unknown> };
type Intent = { text: string; pieceDelayMs?: number } | Call | { calls: Call[] };

function offeredTools(request: ChatRequest): Set<string> {
  if (request.tools) return new Set(request.tools.map((t) => t.function.name));
  const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
  return new Set([...system.matchAll(/^#### ([a-zA-Z0-9_-]+)$/gm)].map((m) => m[1] ?? ""));
}

function currentMode(request: ChatRequest): string {
  const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
  return /^## Mode: .+ \(([a-z0-9_-]+)\)$/m.exec(system)?.[1] ?? "general";
}

/** The tool results the model was just given (the trailing tool messages, or a JSON-format result). */
function lastToolResults(messages: ChatMessage[]): { name: string; content: string }[] {
  const calls = messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : []));
  const results: { name: string; content: string }[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "tool") break;
    const call = calls.find((c) => c.id === message.tool_call_id);
    results.unshift({ name: call?.function.name ?? "", content: message.content });
  }
  const last = messages.at(-1);
  const json =
    last?.role === "user"
      ? /^Result of tool ([a-zA-Z0-9_-]+) \(call [^)]*\):\n([\s\S]*)$/.exec(userText(last.content))
      : null;
  if (json) results.push({ name: json[1] ?? "", content: json[2] ?? "" });
  return results;
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
  const memory = describeMemoryResult(name, value);
  if (memory) return memory;
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
  if (typeof value.text === "string" && name.includes("__")) {
    // An MCP tool's result: its text, its structured content, notes for what it attached.
    const parts = [value.text.slice(0, 600)];
    if (value.structuredContent) parts.push(`Structured content: ${JSON.stringify(value.structuredContent)}`);
    if (Array.isArray(value.attachments)) parts.push(`Attached: ${value.attachments.join("; ")}`);
    return `${PREFIX} The tool ${name} answered: ${parts.filter(Boolean).join("\n")}`;
  }
  return `${PREFIX} The tool ${name} answered: ${content.slice(0, 300)}`;
}

/** Tools the demo reaches through its own phrasings (below), not by their names. */
const BUILT_IN_INTENTS = new Set([
  "agent_list_modes",
  "agent_change_mode",
  "agent_hello_world",
  "workspace_read_file",
  "workspace_write_file",
  // Memory by its own phrasings (demo-memory.ts): plain words like "write" or "find" would otherwise call them.
  "memory_save",
  "memory_search",
  "memory_forget",
  "conversation_search",
]);

const PROPOSALS: [RegExp, string, string][] = [
  [/\bddr\b|design (decision )?record/, "DDR Authoring", "ddr_authoring"],
  [/\b(files?|workspace|repo(sitory)?)\b/, "Workspace", "workspace"],
];

/** A tool's name as the user may write it: `-`, `_` or a space between its words. */
const spelled = (name: string) => name.toLowerCase().replace(/[-_]/g, "[-_ ]");

/**
 * A tool the user names: by its full name (`get_weather`, `everything__get_sum`), or an MCP tool by its own
 * (`get-sum`). Native tool calls only (the JSON format's prompt carries no schemas).
 */
function namedTool(request: ChatRequest, said: string): Call | null {
  const lower = said.toLowerCase();
  const tool = (request.tools ?? [])
    .map((t) => ({ t, own: ownName(t.function.name) }))
    // The longest name first, so `get_sum` wins over `get`.
    .sort((a, b) => b.own.length - a.own.length)
    .find(
      ({ t, own }) => lower.includes(t.function.name.toLowerCase()) || new RegExp(`\\b${spelled(own)}\\b`).test(lower),
    );
  return tool ? callWithArguments(tool.t, said) : null;
}

/**
 * A call of `tool` with arguments valid for its schema, from the user's words less the tool's name: numbers the
 * user gave fill its number fields in order, a quoted phrase (or a capitalised word) its text.
 */
function callWithArguments(tool: ChatTool, said: string): Call {
  const own = spelled(ownName(tool.function.name));
  const schema = tool.function.parameters;
  const args = sampleValue(schema, said.replace(new RegExp(own, "gi"), " ")) as Record<string, unknown>;
  const rest = said.toLowerCase().replace(new RegExp(own, "g"), " ");
  const numbers = [...rest.matchAll(/-?\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const [key, property] of Object.entries(properties)) {
    if ((property.type === "number" || property.type === "integer") && numbers.length > 0) args[key] = numbers.shift();
  }
  return { tool: tool.function.name, args };
}

/** A tool the user asks for in plain words (demo-tool-words.ts); the built-in tools answer their own phrasings. */
function plainWordsTool(request: ChatRequest, said: string): Call | null {
  const candidates = (request.tools ?? []).filter((t) => !BUILT_IN_INTENTS.has(t.function.name));
  const tool = toolForPlainWords(candidates, said);
  return tool ? callWithArguments(tool, said) : null;
}

// A compaction's request, known by its headings (src/prompts/compaction-prompt.ts writes them; prompts/ is a layer
// above llm/, so they are repeated here, and test/llm/demo-model.test.ts answers a request made by compactionRequest).
const SUMMARY_SO_FAR_HEADING = "Summary so far:";
const MESSAGES_HEADING = "Messages to summarise:";

function isCompaction(request: ChatRequest): boolean {
  const asked = userText(request.messages.find((m) => m.role === "user")?.content ?? "");
  return (
    request.messages.length === 2 &&
    request.messages[0]?.role === "system" &&
    request.messages[0].content.startsWith("You summarise the earlier part of a conversation") &&
    (asked.startsWith(MESSAGES_HEADING) || asked.startsWith(SUMMARY_SO_FAR_HEADING))
  );
}

/**
 * A compaction's answer: a plain, deterministic summary of what the user asked in the messages, after the summary
 * so far (cut short, so summaries stay small however long the session).
 */
function demoSummary(request: ChatRequest): string {
  const body = userText(request.messages.find((m) => m.role === "user")?.content ?? "");
  const [before, transcript = ""] = body.split(MESSAGES_HEADING);
  const soFar = before?.startsWith(SUMMARY_SO_FAR_HEADING) ? before.slice(SUMMARY_SO_FAR_HEADING.length).trim() : "";
  const asked = [...transcript.matchAll(/^User: (.*)$/gm)].map((m) =>
    (m[1] ?? "")
      .replace(/\[\[script:[^\]]*\]\]/g, "")
      .trim()
      .slice(0, 60),
  );
  const agentReplies = [...transcript.matchAll(/^Agent: /gm)].length;
  const parts = [
    `${PREFIX} Summary:`,
    soFar ? `Before that: ${soFar.replace(`${PREFIX} Summary: `, "").slice(0, 400)}` : "",
    `The user sent ${asked.length} message${asked.length === 1 ? "" : "s"} and the agent replied ${agentReplies} time${agentReplies === 1 ? "" : "s"}.`,
    asked.length > 0
      ? `The user asked: ${asked
          .slice(-5)
          .map((a) => `"${a}"`)
          .join("; ")}.`
      : "",
  ];
  return parts.filter(Boolean).join(" ");
}

function decide(request: ChatRequest): Intent {
  if (isCompaction(request)) return { text: demoSummary(request) };
  const tools = offeredTools(request);
  const results = lastToolResults(request.messages);
  if (results.length > 0) {
    const lines = results.map((r) => describeResult(r.name, r.content).replace(`${PREFIX} `, ""));
    return { text: `${PREFIX} ${lines.join("\n")}` };
  }
  const lastUser = userText([...request.messages].reverse().find((m) => m.role === "user")?.content ?? "");
  const said = lastUser.replace(/\[\[script:[^\]]*\]\]/g, "").trim();
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
  // What the person asks the agent to remember or forget, and questions its memory section answers.
  const remembering = memoryCall(said, tools);
  if (remembering) return remembering;
  const system = request.messages[0]?.role === "system" ? request.messages[0].content : "";
  const recalled = answerFromMemory(said, promptMemories(system));
  if (recalled) return { text: recalled };
  // A built-in tool's own phrasing first (they have intents below); any other tool the user names is called.
  const named = namedTool(request, said);
  if (named && !BUILT_IN_INTENTS.has(named.tool)) return named;
  const read = /\bread\s+(\S+)/.exec(said);
  if (read && tools.has("workspace_read_file")) return { tool: "workspace_read_file", args: { path: read[1] } };
  const writes = [...said.matchAll(/\bwrite\s+(\S+)(?:\s+with\s+(.+?))?(?=\s+and\s+write\s|$)/g)];
  if (writes.length > 0 && tools.has("workspace_write_file")) {
    return { calls: writes.map((w) => ({ tool: "workspace_write_file", args: { path: w[1], content: w[2] ?? "" } })) };
  }
  if (/\bmodes?\b|what can you do/.test(lower) && tools.has("agent_list_modes")) {
    return { tool: "agent_list_modes", args: { includeExamples: true } };
  }
  if (/\b(?:how (?:does )?aptix works?|diagram|markdown)\b/.test(lower)) return { text: DEMO_TOUR };
  if (/\b(?:slow|long) story\b/.test(lower)) return { text: DEMO_STORY, pieceDelayMs: STORY_PIECE_DELAY_MS };
  const hello = /\b(?:hello|hi|greet)\b(?:\s+to)?\s+([A-Z][\w-]*)/.exec(said) ?? /\bsay hello to\s+(\S+)/i.exec(said);
  if (hello && tools.has("agent_hello_world")) return { tool: "agent_hello_world", args: { name: hello[1] } };
  const asked = plainWordsTool(request, said);
  if (asked) return asked;
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

/**
 * Tool calls made earlier in the conversation the demo was sent: native calls on assistant messages, and
 * results of JSON-format calls. Its call ids count on from there, so they are the same on every run of the
 * same conversation and never repeat within one session (`demo_call_1`, `demo_call_2`, ...).
 */
export function earlierToolCalls(messages: ChatMessage[]): number {
  let count = 0;
  for (const m of messages) {
    if (m.role === "assistant") count += m.tool_calls?.length ?? 0;
    else if (m.role === "user" && userText(m.content).startsWith("Result of tool ")) count++;
  }
  return count;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** The request's onTextDelta, telling onFirstChunk at the first piece (a call's answer tells it when it returns). */
function firstChunkThen(request: ChatRequest): ChatRequest["onTextDelta"] {
  const { onTextDelta, onFirstChunk } = request;
  if (!onTextDelta || !onFirstChunk) return onTextDelta;
  let told = false;
  return (text) => {
    if (!told) {
      told = true;
      onFirstChunk();
    }
    onTextDelta(text);
  };
}

export class DemoChatModel implements ChatModel {
  readonly name = "offline-demo";

  /** @param pieceDelayMs the pause between streamed pieces, so an answer visibly streams in the console. */
  constructor(private readonly pieceDelayMs = 15) {}

  async complete(request: ChatRequest): Promise<ChatResponse> {
    request.signal?.throwIfAborted();
    const response = await this.answer({ ...request, onTextDelta: firstChunkThen(request) });
    request.onFirstChunk?.();
    // Estimated as the prompt budget estimates (about four characters a token): no tokenizer, no bill.
    const promptTokens =
      estimateTokens(JSON.stringify(request.messages)) + estimateTokens(JSON.stringify(request.tools ?? []));
    const completionTokens =
      estimateTokens(response.content ?? "") +
      estimateTokens(response.toolCalls.map((c) => c.name + c.arguments).join(""));
    return { ...response, usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens } };
  }

  private async answer(request: ChatRequest): Promise<ChatResponse> {
    const intent = decide(request);
    if ("text" in intent) {
      const delay = this.pieceDelayMs > 0 ? (intent.pieceDelayMs ?? this.pieceDelayMs) : 0;
      for (const piece of intent.text.match(/[\s\S]{1,24}/g) ?? []) {
        if (request.onTextDelta && delay > 0) await pause(delay, request.signal);
        request.onTextDelta?.(piece);
      }
      return { content: intent.text, toolCalls: [], finishReason: "stop" };
    }
    const calls: Call[] = "calls" in intent ? intent.calls : [intent];
    const earlier = earlierToolCalls(request.messages);
    const toolCalls: ModelToolCall[] = calls.map((c, i) => ({
      id: `demo_call_${earlier + i + 1}`,
      name: c.tool,
      arguments: JSON.stringify(c.args),
    }));
    if (request.tools) return { content: null, toolCalls, finishReason: "tool_calls" };
    const first = calls[0];
    return {
      content: JSON.stringify({ tool: first?.tool, parameters: first?.args, terminate: false }),
      toolCalls: [],
      finishReason: "stop",
    };
  }
}

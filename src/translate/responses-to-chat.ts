// The Responses API as chat completions, and back: a Responses request becomes the chat completions request the
// agent's door already answers (or a refusal naming the param it cannot take), and the door's chat completion,
// error or chunks become a response object or the Responses stream's events. Pure: ids and times are given.
import type { OpenAIErrorBody } from "../errors";
import { quoted } from "../quote";
import type { ChatCompletionRequest, chatCompletion, OpenAIUsage } from "../wire/openai";
import type {
  EchoedToolChoice,
  ResponseEcho,
  ResponseObject,
  ResponsesInputPart,
  ResponsesOutputItem,
  ResponsesOutputMessage,
  ResponsesRequest,
  ResponsesUsage,
} from "../wire/responses";

// ---------------------------------------------------------------------------------------------------------------
// Requests.

export interface ResponsesRefusal {
  ok: false;
  /** The request's field at fault, as the Responses API names it (`input.2.content.0`, `tool_choice`). */
  param: string;
  message: string;
}

export type ChatRequestOutcome =
  | { ok: true; chat: ChatCompletionRequest; previousResponseId: string | null; store: boolean; echo: ResponseEcho }
  | ResponsesRefusal;

type ChatMessage = ChatCompletionRequest["messages"][number];

/** Fields of the Responses API the agent cannot honour, refused rather than dropped: each would change the answer. */
const REFUSED_FIELDS: ReadonlyArray<{
  field: string;
  param?: string;
  refused: (value: unknown) => boolean;
  why: string;
}> = [
  {
    field: "conversation",
    refused: (v) => v != null,
    why: "conversations are not kept here; use previous_response_id",
  },
  { field: "prompt", refused: (v) => v != null, why: "stored prompts are not available; send instructions" },
  { field: "background", refused: (v) => v === true, why: "background responses are not available" },
  { field: "include", refused: (v) => Array.isArray(v) && v.length > 0, why: "no extra output can be included" },
  { field: "top_logprobs", refused: (v) => typeof v === "number" && v > 0, why: "log probabilities are not available" },
  { field: "max_tool_calls", refused: (v) => v != null, why: "the agent's mode decides how many tools it calls" },
  {
    field: "truncation",
    refused: (v) => v === "auto",
    why: "the agent keeps the whole conversation ('disabled' only)",
  },
  {
    field: "text",
    param: "text.format",
    refused: (v) => textFormatOf(v) !== "text",
    why: "only plain text answers are available (text.format of type 'text')",
  },
];

function textFormatOf(text: unknown): string {
  if (typeof text !== "object" || text === null || !("format" in text) || text.format == null) return "text";
  const format = text.format;
  return typeof format === "object" && "type" in format ? String(format.type) : "";
}

const refusal = (param: string, message: string): ResponsesRefusal => ({ ok: false, param, message });

/** A content's text (parts joined), or the first part the agent cannot read (it reads text). */
function textOf(content: ResponsesInputPart[], param: string): { text: string } | ResponsesRefusal {
  const index = content.findIndex((part) => part.type === "input_image");
  if (index >= 0) return refusal(`${param}.${index}`, "only text parts are supported (the agent reads text)");
  return { text: content.map((part) => ("text" in part ? part.text : "")).join("") };
}

function chatToolChoice(choice: ResponsesRequest["tool_choice"]) {
  if (choice == null || typeof choice === "string") return { ok: true as const, chat: choice ?? undefined };
  if (choice.type === "function" && choice.name) {
    return { ok: true as const, chat: { type: "function" as const, function: { name: choice.name } } };
  }
  return refusal(
    "tool_choice",
    `tool_choice of type ${quoted(choice.type)} is not supported (none, auto, required, or a function by name)`,
  );
}

/** The tool choice as a response repeats it. */
function echoedToolChoice(choice: ResponsesRequest["tool_choice"]): EchoedToolChoice {
  if (typeof choice === "string") return choice;
  if (choice?.type === "function" && choice.name) return { type: "function", name: choice.name };
  return "auto";
}

/** The input as chat messages: a function call joins the assistant message before it, as chat's tool_calls. */
function chatMessages(input: ResponsesRequest["input"]): { messages: ChatMessage[] } | ResponsesRefusal {
  const messages: ChatMessage[] = [];
  for (const [index, item] of input.entries()) {
    const param = `input.${index}`;
    if (item.type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function" as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      const output = textOf(item.output, `${param}.output`);
      if ("ok" in output) return output;
      messages.push({ role: "tool", tool_call_id: item.call_id, content: output.text });
    } else {
      const text = textOf(item.content, `${param}.content`);
      if ("ok" in text) return text;
      messages.push({ role: item.role, content: text.text });
    }
  }
  return { messages };
}

/** What a response repeats of the request that asked for it (defaults as OpenAI answers them). */
export function responseEcho(req: ResponsesRequest): ResponseEcho {
  return {
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: req.metadata ?? {},
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    store: req.store ?? true,
    temperature: req.temperature ?? null,
    tool_choice: echoedToolChoice(req.tool_choice),
    tools: req.tools ?? [],
    top_p: req.top_p ?? null,
    ...(req.user !== undefined ? { user: req.user } : {}),
  };
}

/**
 * A Responses request as the chat completions request the agent's door answers: the instructions as a first system
 * message, the input items as messages, function tools as chat tools. Fields the door leaves to the mode
 * (temperature, top_p, max_output_tokens as max_completion_tokens...) are carried as chat completions spells them.
 */
export function responsesToChatRequest(req: ResponsesRequest): ChatRequestOutcome {
  for (const { field, param = field, refused, why } of REFUSED_FIELDS) {
    if (refused(req[field])) return refusal(param, `${quoted(param)} is not supported: ${why}.`);
  }
  const choice = chatToolChoice(req.tool_choice);
  if (!choice.ok) return choice;
  const input = chatMessages(req.input);
  if ("ok" in input) return input;
  const instructions: ChatMessage[] = req.instructions ? [{ role: "system", content: req.instructions }] : [];
  const tools = (req.tools ?? []).map((tool) => ({
    type: "function" as const,
    function: {
      name: tool.name,
      ...(tool.description != null ? { description: tool.description } : {}),
      ...(tool.parameters != null ? { parameters: tool.parameters } : {}),
      ...(tool.strict != null ? { strict: tool.strict } : {}),
    },
  }));
  const chat: ChatCompletionRequest = {
    model: req.model,
    messages: [...instructions, ...input.messages],
    ...(tools.length > 0 ? { tools } : {}),
    ...(choice.chat !== undefined ? { tool_choice: choice.chat } : {}),
    ...(req.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    ...(req.max_output_tokens != null ? { max_completion_tokens: req.max_output_tokens } : {}),
    ...(req.temperature != null ? { temperature: req.temperature } : {}),
    ...(req.top_p != null ? { top_p: req.top_p } : {}),
    ...(req.parallel_tool_calls != null ? { parallel_tool_calls: req.parallel_tool_calls } : {}),
    ...(req.metadata != null ? { metadata: req.metadata } : {}),
    ...(req.user !== undefined ? { user: req.user } : {}),
  };
  return {
    ok: true,
    chat,
    previousResponseId: req.previous_response_id ?? null,
    store: req.store ?? true,
    echo: responseEcho(req),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Answers.

/** What a response is made of beside the answer: its id, when, and what it repeats of its request. */
export interface ResponseMeta {
  id: string;
  /** Seconds since the epoch. */
  createdAt: number;
  model: string;
  echo: ResponseEcho;
  /** A new output item's id (`msg_…`, `fc_…`); random unless a test fixes it. */
  newItemId?: (prefix: "msg" | "fc") => string;
}

/** A chat completion as the door writes it, with the usage details OpenAI adds. */
export type DoorCompletion = Omit<ReturnType<typeof chatCompletion>, "usage"> & { usage?: ChatUsage };

/** Chat completions usage, with the details an upstream may add. */
export type ChatUsage = OpenAIUsage & {
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
};

export function randomItemId(prefix: "msg" | "fc"): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

export function responsesUsage(usage: ChatUsage): ResponsesUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/** A finish reason as a response's status: cut by the token limit or the content filter is incomplete. */
export function statusOfFinish(finish: string | null | undefined): {
  status: "completed" | "incomplete";
  incomplete_details: ResponseObject["incomplete_details"];
} {
  if (finish === "length") return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
  if (finish === "content_filter") return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
  return { status: "completed", incomplete_details: null };
}

/** A response object around its output, status and usage. */
export function responseObject(
  meta: ResponseMeta,
  state: Pick<ResponseObject, "status" | "error" | "incomplete_details" | "output" | "usage">,
): ResponseObject {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    model: meta.model,
    ...state,
    ...meta.echo,
    text: { format: { type: "text" } },
    truncation: "disabled",
  };
}

function messageItem(id: string, text: string, status: ResponsesOutputMessage["status"]): ResponsesOutputMessage {
  return {
    type: "message",
    id,
    role: "assistant",
    status,
    content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
  };
}

/**
 * The door's chat completion as a response: its text as a message item, each tool call as a function_call item
 * (call_id the tool call's id), the finish reason as the status, the usage in the Responses API's names.
 */
export function chatCompletionToResponse(completion: DoorCompletion, meta: ResponseMeta): ResponseObject {
  const newId = meta.newItemId ?? randomItemId;
  const choice = completion.choices[0];
  const { status, incomplete_details } = statusOfFinish(choice?.finish_reason);
  const itemStatus = status === "completed" ? "completed" : "incomplete";
  const output: ResponsesOutputItem[] = [];
  const text = choice?.message.content ?? "";
  if (text) output.push(messageItem(newId("msg"), text, itemStatus));
  for (const call of choice?.message.tool_calls ?? []) {
    output.push({
      type: "function_call",
      id: newId("fc"),
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      status: "completed",
    });
  }
  return responseObject(meta, {
    status,
    error: null,
    incomplete_details,
    output,
    usage: completion.usage ? responsesUsage(completion.usage) : null,
  });
}

/** The door's error (OpenAI's error body) as a failed response: no output, the error's code and message. */
export function failedResponse(
  error: OpenAIErrorBody,
  meta: ResponseMeta,
  partial: { output?: ResponsesOutputItem[]; usage?: ResponsesUsage | null } = {},
): ResponseObject {
  return responseObject(meta, {
    status: "failed",
    error: { code: error.error.code ?? "server_error", message: error.error.message },
    incomplete_details: null,
    output: partial.output ?? [],
    usage: partial.usage ?? null,
  });
}

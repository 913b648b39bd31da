// Anthropic's Messages API <-> OpenAI chat completions: the chat side as the translation reads and writes it,
// an Anthropic client's request and answer mapped (the other direction is chat-to-anthropic.ts, the streams are
// anthropic-chat-stream.ts), and errors both ways. What has no equivalent on the other side is refused with the
// param that carries it, or dropped where dropping cannot change the answer; docs/anthropic.md has the table.
import { z } from "zod";
import type { ApiErrorType, OpenAIErrorBody } from "../errors";
import {
  ANTHROPIC_ERROR_STATUS,
  type AnthropicErrorBody,
  type AnthropicErrorType,
  type AnthropicMessage,
  type AnthropicUsage,
  anthropicErrorBody,
  type ContentBlock,
  type ImageBlockParam,
  isAnthropicErrorType,
  isKnownBlockParam,
  type MessageParam,
  type MessagesRequest,
  type StopReason,
  type ToolResultBlockParam,
} from "../wire/anthropic";
import { ChatCompletionRequest, ChatContentPart, chatMessageIn, type OpenAIToolCall } from "../wire/openai";

/** A translation: the other wire's value, or a refusal naming the field (a param path) it cannot carry. */
export type Translated<T> = { ok: true; value: T } | { ok: false; param: string; message: string };

export const ok = <T>(value: T): Translated<T> => ({ ok: true, value });
export const refuse = (param: string, message: string): { ok: false; param: string; message: string } => ({
  ok: false,
  param,
  message,
});

// ---------------------------------------------------------------------------------------------------------------
// The chat completions side, as the translation reads it (leniently) and writes it.

export const ChatImagePart = z.looseObject({
  type: z.literal("image_url"),
  image_url: z.looseObject({ url: z.string().min(1), detail: z.string().optional() }),
});

/** A content part: text, an image, or another kind (audio, a file), kept so a refusal can name it. */
export const ChatPartIn = z.union([
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  ChatImagePart,
  ChatContentPart,
]);

const nullish = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/** A chat completions request as an Anthropic route reads it: the fields the translation maps or refuses. */
export const ChatRequestIn = ChatCompletionRequest.extend({
  messages: z.array(chatMessageIn(ChatPartIn)).min(1, "needs at least one message"),
  max_tokens: nullish(z.number().int().positive()),
  max_completion_tokens: nullish(z.number().int().positive()),
  temperature: nullish(z.number()),
  top_p: nullish(z.number()),
  stop: nullish(z.union([z.string(), z.array(z.string())])),
  n: nullish(z.number().int()),
  logprobs: nullish(z.boolean()),
  top_logprobs: nullish(z.number().int()),
  response_format: nullish(z.looseObject({ type: z.string() })),
  presence_penalty: nullish(z.number()),
  frequency_penalty: nullish(z.number()),
  logit_bias: nullish(z.record(z.string(), z.number())),
  parallel_tool_calls: nullish(z.boolean()),
  user: nullish(z.string()),
});
export type ChatRequestIn = z.infer<typeof ChatRequestIn>;

/** A `chat.completion` as the translation reads it. */
export const ChatCompletionIn = z.looseObject({
  id: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: nullish(z.string()),
          refusal: nullish(z.string()),
          tool_calls: nullish(
            z.array(z.looseObject({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) })),
          ),
        }),
        finish_reason: nullish(z.string()),
        /** vLLM and others say which stop sequence ended the answer. */
        stop_reason: nullish(z.union([z.string(), z.number()])),
      }),
    )
    .min(1),
  usage: nullish(
    z.looseObject({
      prompt_tokens: z.number(),
      completion_tokens: z.number(),
      prompt_tokens_details: nullish(z.looseObject({ cached_tokens: nullish(z.number()) })),
    }),
  ),
});
export type ChatCompletionIn = z.infer<typeof ChatCompletionIn>;
export type ChatUsageIn = NonNullable<ChatCompletionIn["usage"]>;

export type ChatPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

/** A message as the translation writes it. */
export type ChatMessageOut =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatRequestOut {
  model: string;
  messages: ChatMessageOut[];
  max_tokens?: number;
  max_completion_tokens?: number;
  tools?: { type: "function"; function: { name: string; description?: string; parameters: Record<string, unknown> } }[];
  tool_choice?: "auto" | "none" | "required" | { type: "function"; function: { name: string } };
  parallel_tool_calls?: boolean;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  stream?: true;
  stream_options?: { include_usage: true };
}

export interface ChatUsageOut {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

// ---------------------------------------------------------------------------------------------------------------
// Anthropic request -> chat completions request.

export interface MessagesToChatOptions {
  /** The model the upstream is asked for (the route's), in place of the client's. */
  model?: string;
  /**
   * Which field carries `max_tokens`: `max_completion_tokens` (OpenAI's current field, the default; its reasoning
   * models refuse the other) or `max_tokens` (for older OpenAI-compatible servers).
   */
  maxTokensField?: "max_completion_tokens" | "max_tokens";
}

/** A tool result's marker when `is_error` is set: tool messages have no error flag, so the model reads it. */
export const TOOL_ERROR_PREFIX = "[tool error] ";

/**
 * Fields of Anthropic's API beyond the request schema (its betas) that change the answer: refused on a chat route
 * rather than passed over unread (the schema lets unknown fields through, as Anthropic adds them).
 */
const REFUSED_BETA_FIELDS: ReadonlyArray<{ field: string; refused: (value: unknown) => boolean; why: string }> = [
  {
    field: "mcp_servers",
    refused: (v) => Array.isArray(v) && v.length > 0,
    why: "MCP servers called by the model (the MCP connector) have no chat completions equivalent on this route.",
  },
  {
    field: "container",
    refused: (v) => v != null,
    why: "A code execution container has no chat completions equivalent on this route.",
  },
];

export function messagesToChatRequest(
  req: MessagesRequest,
  options: MessagesToChatOptions = {},
): Translated<ChatRequestOut> {
  if (req.top_k !== undefined) return refuse("top_k", "top_k has no chat completions equivalent.");
  if (req.thinking && req.thinking.type !== "disabled")
    return refuse("thinking", "Extended thinking has no chat completions equivalent on this route.");
  for (const { field, refused, why } of REFUSED_BETA_FIELDS) {
    if (refused(req[field])) return refuse(field, why);
  }
  const messages: ChatMessageOut[] = [];
  if (req.system !== undefined) {
    const system = typeof req.system === "string" ? req.system : req.system.map((block) => block.text).join("\n\n");
    if (system !== "") messages.push({ role: "system", content: system });
  }
  for (const [i, message] of req.messages.entries()) {
    const mapped = chatMessagesOf(message, `messages[${i}]`);
    if (!mapped.ok) return mapped;
    messages.push(...mapped.value);
  }
  const out: ChatRequestOut = { model: options.model ?? req.model, messages };
  out[options.maxTokensField ?? "max_completion_tokens"] = req.max_tokens;
  if (req.tools && req.tools.length > 0) {
    const tools: NonNullable<ChatRequestOut["tools"]> = [];
    for (const [i, tool] of req.tools.entries()) {
      if (tool.type && tool.type !== "custom")
        return refuse(`tools[${i}].type`, `The server tool ${tool.type} has no chat completions equivalent.`);
      tools.push({
        type: "function",
        function: {
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          parameters: tool.input_schema ?? { type: "object", properties: {} },
        },
      });
    }
    out.tools = tools;
  }
  if (req.tool_choice) {
    const choice = req.tool_choice;
    out.tool_choice =
      choice.type === "auto"
        ? "auto"
        : choice.type === "any"
          ? "required"
          : choice.type === "none"
            ? "none"
            : { type: "function", function: { name: choice.name } };
    if (choice.type !== "none" && choice.disable_parallel_tool_use && out.tools) out.parallel_tool_calls = false;
  }
  if (req.stop_sequences && req.stop_sequences.length > 0) out.stop = req.stop_sequences;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return ok(out);
}

/** One Anthropic message as chat messages: a user's tool results become tool messages ahead of its other parts. */
function chatMessagesOf(message: MessageParam, at: string): Translated<ChatMessageOut[]> {
  if (typeof message.content === "string") return ok([{ role: message.role, content: message.content }]);
  const out: ChatMessageOut[] = [];
  const parts: ChatPart[] = [];
  const toolCalls: OpenAIToolCall[] = [];
  for (const [j, block] of message.content.entries()) {
    const param = `${at}.content[${j}]`;
    const refused = (why: string) => refuse(param, `A ${block.type} block ${why}.`);
    if (!isKnownBlockParam(block)) return refused("has no chat completions equivalent");
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text });
        break;
      case "image": {
        if (message.role === "assistant") return refused("in an assistant message has no chat completions equivalent");
        parts.push(imagePart(block));
        break;
      }
      case "tool_use": {
        if (message.role !== "assistant") return refused("belongs in an assistant message");
        toolCalls.push({
          id: block.id,
          type: "function",
          function: { name: block.name, arguments: JSON.stringify(block.input) },
        });
        break;
      }
      case "tool_result": {
        if (message.role !== "user") return refused("belongs in a user message");
        const result = toolResultMessage(block, param);
        if (!result.ok) return result;
        out.push(result.value);
        break;
      }
      case "thinking":
      case "redacted_thinking":
        // Dropped: Anthropic itself ignores the thinking of earlier turns, and no chat completions model can read it.
        break;
      case "document":
        return refused("has no chat completions equivalent on this route");
    }
  }
  if (message.role === "assistant") {
    const text = parts.map((part) => (part.type === "text" ? part.text : "")).join("");
    out.push({
      role: "assistant",
      content: text === "" && toolCalls.length > 0 ? null : text,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    });
  } else if (parts.length > 0) {
    const textOnly = parts.every((part) => part.type === "text");
    out.push({ role: "user", content: textOnly ? parts.map((part) => part.text).join("\n") : parts });
  }
  return ok(out);
}

function imagePart(block: ImageBlockParam): ChatPart {
  const source = block.source;
  const url = source.type === "base64" ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: "image_url", image_url: { url } };
}

function toolResultMessage(block: ToolResultBlockParam, param: string): Translated<ChatMessageOut> {
  let text = "";
  if (typeof block.content === "string") text = block.content;
  else {
    const texts: string[] = [];
    for (const [k, part] of (block.content ?? []).entries()) {
      if (part.type !== "text")
        return refuse(
          `${param}.content[${k}]`,
          `A tool result's ${part.type} block has no chat completions equivalent.`,
        );
      texts.push(part.text);
    }
    text = texts.join("\n");
  }
  return ok({
    role: "tool",
    tool_call_id: block.tool_use_id,
    content: block.is_error ? TOOL_ERROR_PREFIX + text : text,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Chat completions answer -> Anthropic message.

/** A finish reason as Anthropic's stop reason; one OpenAI does not document is an end of turn. */
export function stopReasonOfFinish(finish: string | null | undefined): StopReason {
  switch (finish) {
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** Chat usage as Anthropic's: its input_tokens leave out the tokens read from the cache, which it counts apart. */
export function anthropicUsageOf(usage: ChatUsageIn | null | undefined): AnthropicUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? null;
  return {
    input_tokens: (usage?.prompt_tokens ?? 0) - (cached ?? 0),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: cached,
  };
}

/** A tool call's arguments as a tool_use block's input: a JSON object, or a refusal naming where it was not. */
export function toolInputOf(args: string, param: string): Translated<Record<string, unknown>> {
  try {
    const input: unknown = JSON.parse(args === "" ? "{}" : args);
    if (typeof input === "object" && input !== null && !Array.isArray(input)) return ok({ ...input });
  } catch {
    // Not JSON: refused below, as is JSON that is not an object.
  }
  return refuse(param, "The tool call's arguments are not a JSON object.");
}

/** Anthropic's id for an answer: the completion's id, with Anthropic's prefix. */
export const messageIdOf = (id: string | undefined): string =>
  id?.startsWith("msg_") ? id : `msg_${id ?? crypto.randomUUID()}`;

/**
 * A chat completion as an Anthropic message. A refusal here is the upstream's fault (arguments that are not a JSON
 * object): the route answers it as an upstream error.
 */
export function chatResponseToMessage(resp: ChatCompletionIn, model: string): Translated<AnthropicMessage> {
  const choice = resp.choices[0];
  if (!choice) return refuse("choices", "The completion has no choice.");
  const content: ContentBlock[] = [];
  const text = choice.message.content ?? "";
  const refusal = choice.message.refusal ?? "";
  if (text !== "") content.push({ type: "text", text });
  if (refusal !== "") content.push({ type: "text", text: refusal });
  for (const [i, call] of (choice.message.tool_calls ?? []).entries()) {
    const input = toolInputOf(call.function.arguments, `choices[0].message.tool_calls[${i}].function.arguments`);
    if (!input.ok) return input;
    content.push({ type: "tool_use", id: call.id, name: call.function.name, input: input.value });
  }
  let stopReason = refusal !== "" ? "refusal" : stopReasonOfFinish(choice.finish_reason);
  const stopSequence =
    typeof choice.stop_reason === "string" && choice.finish_reason === "stop" ? choice.stop_reason : null;
  if (stopSequence !== null) stopReason = "stop_sequence";
  return ok({
    id: messageIdOf(resp.id),
    type: "message",
    role: "assistant",
    content,
    model,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    usage: anthropicUsageOf(resp.usage),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Errors.

/** An error type for a status, as Anthropic would answer it. */
export function anthropicErrorTypeOf(status: number): AnthropicErrorType {
  for (const type of Object.keys(ANTHROPIC_ERROR_STATUS))
    if (isAnthropicErrorType(type) && ANTHROPIC_ERROR_STATUS[type] === status) return type;
  if (status === 503) return "overloaded_error";
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** Our OpenAI-shaped error as Anthropic's; the param, which Anthropic's shape has no field for, leads the message. */
export function openAIErrorToAnthropic(status: number, body: OpenAIErrorBody): AnthropicErrorBody {
  const { message, param } = body.error;
  return anthropicErrorBody(anthropicErrorTypeOf(status), param ? `${param}: ${message}` : message);
}

const OPENAI_TYPE_OF: Record<AnthropicErrorType, ApiErrorType> = {
  invalid_request_error: "invalid_request_error",
  authentication_error: "authentication_error",
  billing_error: "rate_limit_error",
  permission_error: "permission_error",
  not_found_error: "not_found_error",
  request_too_large: "invalid_request_error",
  rate_limit_error: "rate_limit_error",
  api_error: "upstream_error",
  timeout_error: "upstream_error",
  overloaded_error: "upstream_error",
};

/**
 * Anthropic's error as our OpenAI-shaped one, with the status an OpenAI client understands (529, Anthropic's
 * overload, becomes 503). Its code is Anthropic's error type.
 */
export function anthropicErrorToOpenAI(
  status: number,
  body: AnthropicErrorBody,
): { status: number; body: OpenAIErrorBody } {
  const type = isAnthropicErrorType(body.error.type) ? body.error.type : anthropicErrorTypeOf(status);
  return {
    status: status === 529 ? 503 : status,
    body: { error: { message: body.error.message, type: OPENAI_TYPE_OF[type], code: body.error.type, param: null } },
  };
}

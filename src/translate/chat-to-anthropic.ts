// OpenAI chat completions -> Anthropic's Messages API, for an OpenAI client on an Anthropic route: the request
// and the answer back (the mapping tables shared by both directions are in anthropic-to-chat.ts, the streams in
// anthropic-chat-stream.ts). What dropping would change is refused with the param that carries it.
import type { z } from "zod";
import {
  type AnthropicMessage,
  type ContentBlockParam,
  IMAGE_MEDIA_TYPES,
  type ImageMediaType,
  type MessageParam,
  type MessagesRequest,
  type StopReason,
} from "../wire/anthropic";
import type { OpenAIToolCall } from "../wire/openai";
import {
  ChatImagePart,
  type ChatPartIn,
  type ChatRequestIn,
  type ChatUsageOut,
  ok,
  refuse,
  type Translated,
  toolInputOf,
} from "./anthropic-to-chat";
// ---------------------------------------------------------------------------------------------------------------
// Chat completions request -> Anthropic request.

export interface ChatToMessagesOptions {
  /** The model the upstream is asked for (the route's), in place of the client's. */
  model?: string;
  /** `max_tokens` when the client sent none (Anthropic requires it): 4096 unless the route says. */
  defaultMaxTokens?: number;
}

export const DEFAULT_MAX_TOKENS = 4096;

type AnthropicBlockOut = Exclude<ContentBlockParam, { type: "thinking" | "redacted_thinking" | "document" }>;

export function chatRequestToMessages(
  req: ChatRequestIn,
  options: ChatToMessagesOptions = {},
): Translated<MessagesRequest> {
  if (req.n != null && req.n > 1) return refuse("n", "n greater than 1 has no Messages API equivalent.");
  if (req.logprobs) return refuse("logprobs", "logprobs have no Messages API equivalent.");
  if (req.top_logprobs != null) return refuse("top_logprobs", "top_logprobs have no Messages API equivalent.");
  if (req.response_format && req.response_format.type !== "text")
    return refuse("response_format", `response_format ${req.response_format.type} has no Messages API equivalent.`);
  if (req.presence_penalty) return refuse("presence_penalty", "presence_penalty has no Messages API equivalent.");
  if (req.frequency_penalty) return refuse("frequency_penalty", "frequency_penalty has no Messages API equivalent.");
  if (req.logit_bias && Object.keys(req.logit_bias).length > 0)
    return refuse("logit_bias", "logit_bias has no Messages API equivalent.");
  if (req.temperature != null && req.temperature > 1)
    return refuse("temperature", "The Messages API takes a temperature from 0 to 1.");

  const system: string[] = [];
  const messages: MessageParam[] = [];
  let toolResults: AnthropicBlockOut[] | null = null;
  for (const [i, message] of req.messages.entries()) {
    const at = `messages[${i}]`;
    if (message.role !== "tool") toolResults = null;
    if (message.role === "system" || message.role === "developer") {
      if (messages.length > 0)
        return refuse(`${at}.role`, "The Messages API takes system text only before the conversation.");
      system.push(textOf(message.content));
      continue;
    }
    if (message.role === "tool") {
      const block: AnthropicBlockOut = {
        type: "tool_result",
        tool_use_id: message.tool_call_id,
        content: textOf(message.content),
      };
      if (toolResults) toolResults.push(block);
      else {
        toolResults = [block];
        messages.push({ role: "user", content: toolResults });
      }
      continue;
    }
    if (message.role === "user") {
      const content = userBlocksOf(message.content, at);
      if (!content.ok) return content;
      messages.push({ role: "user", content: content.value });
      continue;
    }
    const blocks: AnthropicBlockOut[] = [];
    const text = textOf(message.content ?? null);
    if (text !== "") blocks.push({ type: "text", text });
    for (const [j, call] of (message.tool_calls ?? []).entries()) {
      const input = toolInputOf(call.function.arguments, `${at}.tool_calls[${j}].function.arguments`);
      if (!input.ok) return input;
      blocks.push({ type: "tool_use", id: call.id, name: call.function.name, input: input.value });
    }
    messages.push({ role: "assistant", content: blocks });
  }
  if (messages.length === 0) return refuse("messages", "The Messages API needs at least one non-system message.");

  const out: MessagesRequest = {
    model: options.model ?? req.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
    messages,
  };
  if (system.length > 0) out.system = system.join("\n\n");
  if (req.tools && req.tools.length > 0) {
    out.tools = req.tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
      input_schema: tool.function.parameters ?? { type: "object", properties: {} },
    }));
  }
  const single = req.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  const choice = req.tool_choice;
  if (choice === "none") out.tool_choice = { type: "none" };
  else if (choice === "required") out.tool_choice = { type: "any", ...single };
  else if (typeof choice === "object") out.tool_choice = { type: "tool", name: choice.function.name, ...single };
  else if (choice === "auto" || req.parallel_tool_calls === false) out.tool_choice = { type: "auto", ...single };
  if (req.stop != null) {
    const stops = typeof req.stop === "string" ? [req.stop] : req.stop;
    if (stops.length > 0) out.stop_sequences = stops;
  }
  if (req.temperature != null) out.temperature = req.temperature;
  if (req.top_p != null) out.top_p = req.top_p;
  if (req.stream) out.stream = true;
  if (req.user) out.metadata = { user_id: req.user };
  return ok(out);
}

type ChatPartInType = z.infer<typeof ChatPartIn>;

function textOf(content: string | readonly ChatPartInType[] | null): string {
  if (content === null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}

function userBlocksOf(content: string | ChatPartInType[] | null, at: string): Translated<string | AnthropicBlockOut[]> {
  if (content === null) return ok("");
  if (typeof content === "string") return ok(content);
  const blocks: AnthropicBlockOut[] = [];
  for (const [j, part] of content.entries()) {
    const param = `${at}.content[${j}]`;
    if (part.type === "text" && typeof part.text === "string") blocks.push({ type: "text", text: part.text });
    else {
      const imagePart = ChatImagePart.safeParse(part);
      if (!imagePart.success) return refuse(param, `A ${part.type} part has no Messages API equivalent.`);
      const image = imageBlockOf(imagePart.data.image_url.url, param);
      if (!image.ok) return image;
      blocks.push(image.value);
    }
  }
  return ok(blocks);
}

function imageBlockOf(url: string, param: string): Translated<AnthropicBlockOut> {
  const data = /^data:([^;,]+);base64,(.+)$/s.exec(url);
  if (data) {
    const mediaType = data[1] ?? "";
    if (!isImageMediaType(mediaType))
      return refuse(param, `The Messages API takes images of ${IMAGE_MEDIA_TYPES.join(", ")}, not ${mediaType}.`);
    return ok({ type: "image", source: { type: "base64", media_type: mediaType, data: data[2] ?? "" } });
  }
  if (/^https?:\/\//.test(url)) return ok({ type: "image", source: { type: "url", url } });
  return refuse(param, "An image URL must be an http(s) URL or a base64 data URL.");
}

const isImageMediaType = (type: string): type is ImageMediaType =>
  (IMAGE_MEDIA_TYPES as readonly string[]).includes(type);

// ---------------------------------------------------------------------------------------------------------------
// Anthropic message -> chat completion.

/** A stop reason as a finish reason. */
export function finishOfStopReason(reason: StopReason | null | undefined): string {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

/** Anthropic usage as chat usage: prompt tokens count the cache's reads and writes too. */
export function chatUsageOf(usage: {
  input_tokens?: number | null;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}): ChatUsageOut {
  const cached = usage.cache_read_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + cached;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output_tokens,
    total_tokens: prompt + usage.output_tokens,
    ...(usage.cache_read_input_tokens != null ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
}

/** An Anthropic message as a `chat.completion`; thinking blocks are dropped (the answer is its text and calls). */
export function messageToChatResponse(msg: AnthropicMessage, created: number) {
  const text = msg.content.map((block) => (block.type === "text" ? String(block.text) : "")).join("");
  const toolCalls: OpenAIToolCall[] = msg.content.flatMap((block) =>
    block.type === "tool_use"
      ? [
          {
            id: String(block.id),
            type: "function" as const,
            function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
          },
        ]
      : [],
  );
  return {
    id: msg.id,
    object: "chat.completion" as const,
    created,
    model: msg.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant" as const,
          content: text === "" && toolCalls.length > 0 ? null : text,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          refusal: null,
        },
        finish_reason: finishOfStopReason(msg.stop_reason),
        logprobs: null,
      },
    ],
    usage: chatUsageOf(msg.usage),
  };
}

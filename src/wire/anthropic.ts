// Anthropic's Messages API wire, as Anthropic documents it: the request (messages of content blocks, system,
// tools, tool choice, sampling), the message it answers, the events of its stream, and its error shape with the
// status each error type comes with. Read leniently: fields aptix does not use pass.
import { z } from "zod";

// ---------------------------------------------------------------------------------------------------------------
// Content blocks a request carries.

/** A prompt caching hint; it changes cost, never the answer. */
const CacheControl = z.looseObject({ type: z.string() }).nullable().optional();

export const TextBlockParam = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: CacheControl,
  citations: z.array(z.unknown()).nullable().optional(),
});
export type TextBlockParam = z.infer<typeof TextBlockParam>;

export const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

export const ImageSource = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("base64"), media_type: z.enum(IMAGE_MEDIA_TYPES), data: z.string().min(1) }),
  z.looseObject({ type: z.literal("url"), url: z.string().min(1) }),
]);
export type ImageSource = z.infer<typeof ImageSource>;

export const ImageBlockParam = z.looseObject({
  type: z.literal("image"),
  source: ImageSource,
  cache_control: CacheControl,
});
export type ImageBlockParam = z.infer<typeof ImageBlockParam>;

/** A document (a PDF, plain text, or content blocks); its source is read only as far as its kind. */
export const DocumentBlockParam = z.looseObject({
  type: z.literal("document"),
  source: z.looseObject({ type: z.string() }),
  title: z.string().nullable().optional(),
  context: z.string().nullable().optional(),
  cache_control: CacheControl,
});

export const ToolUseBlockParam = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: CacheControl,
});

export const ToolResultBlockParam = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion("type", [TextBlockParam, ImageBlockParam, DocumentBlockParam]))])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: CacheControl,
});
export type ToolResultBlockParam = z.infer<typeof ToolResultBlockParam>;

export const ThinkingBlockParam = z.looseObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string(),
});

export const RedactedThinkingBlockParam = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });

const KNOWN_BLOCK_PARAMS = ["text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"];

/** The block kinds the translation knows. */
export const KnownBlockParam = z.discriminatedUnion("type", [
  TextBlockParam,
  ImageBlockParam,
  DocumentBlockParam,
  ToolUseBlockParam,
  ToolResultBlockParam,
  ThinkingBlockParam,
  RedactedThinkingBlockParam,
]);
export type KnownBlockParam = z.infer<typeof KnownBlockParam>;

/**
 * A block of a kind Anthropic has beyond the ones above (server tool blocks, search results...): kept by its type,
 * so the translation can name it in a refusal instead of failing the parse with a generic message.
 */
export const OtherBlockParam = z.looseObject({
  type: z.string().refine((type) => !KNOWN_BLOCK_PARAMS.includes(type), "is a known block type with a wrong shape"),
});

export const ContentBlockParam = z.union([KnownBlockParam, OtherBlockParam]);
export type ContentBlockParam = z.infer<typeof ContentBlockParam>;

export const isKnownBlockParam = (block: ContentBlockParam): block is KnownBlockParam =>
  KNOWN_BLOCK_PARAMS.includes(block.type);

export const MessageParam = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(ContentBlockParam)], {
    error: "must be a string or an array of content blocks",
  }),
});
export type MessageParam = z.infer<typeof MessageParam>;

// ---------------------------------------------------------------------------------------------------------------
// Tools and the request.

/** A tool: a client tool (no type, or "custom") or one of Anthropic's server tools (its own type). */
export const AnthropicTool = z.looseObject({
  type: z.string().nullable().optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()).optional(),
  cache_control: CacheControl,
});
export type AnthropicTool = z.infer<typeof AnthropicTool>;

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
export const AnthropicToolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), ...parallel }),
  z.looseObject({ type: z.literal("any"), ...parallel }),
  z.looseObject({ type: z.literal("tool"), name: z.string().min(1), ...parallel }),
  z.looseObject({ type: z.literal("none") }),
]);
export type AnthropicToolChoice = z.infer<typeof AnthropicToolChoice>;

export const ThinkingConfig = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("enabled"), budget_tokens: z.number().int() }),
  z.looseObject({ type: z.literal("disabled") }),
  z.looseObject({ type: z.literal("adaptive") }),
]);

/** A Messages API request. */
export const MessagesRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(MessageParam).min(1, "needs at least one message"),
  system: z.union([z.string(), z.array(TextBlockParam)]).optional(),
  tools: z.array(AnthropicTool).optional(),
  tool_choice: AnthropicToolChoice.optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  thinking: ThinkingConfig.optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

// ---------------------------------------------------------------------------------------------------------------
// The answer.

export const TextBlock = z.looseObject({
  type: z.literal("text"),
  text: z.string(),
  citations: z.array(z.unknown()).nullable().optional(),
});
export const ToolUseBlock = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
export const ThinkingBlock = z.looseObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string(),
});
export const RedactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });

const KNOWN_BLOCKS = ["text", "tool_use", "thinking", "redacted_thinking"];
/** An answer's block of another kind (a server tool's use or result): kept by its type. */
export const OtherBlock = z.looseObject({
  type: z.string().refine((type) => !KNOWN_BLOCKS.includes(type), "is a known block type with a wrong shape"),
});

export const ContentBlock = z.union([
  z.discriminatedUnion("type", [TextBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock]),
  OtherBlock,
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const STOP_REASONS = [
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
] as const;
export const StopReason = z.enum(STOP_REASONS);
export type StopReason = z.infer<typeof StopReason>;

export const AnthropicUsage = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number().nullable().optional(),
  cache_read_input_tokens: z.number().nullable().optional(),
});
export type AnthropicUsage = z.infer<typeof AnthropicUsage>;

/** A whole answer: `type: "message"`. */
export const AnthropicMessage = z.looseObject({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  content: z.array(ContentBlock),
  model: z.string(),
  stop_reason: StopReason.nullable(),
  stop_sequence: z.string().nullable().optional(),
  usage: AnthropicUsage,
});
export type AnthropicMessage = z.infer<typeof AnthropicMessage>;

// ---------------------------------------------------------------------------------------------------------------
// Errors.

/** Every error type Anthropic answers, with the HTTP status it comes with. */
export const ANTHROPIC_ERROR_STATUS = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
} as const;
export type AnthropicErrorType = keyof typeof ANTHROPIC_ERROR_STATUS;

export const isAnthropicErrorType = (type: string): type is AnthropicErrorType =>
  Object.hasOwn(ANTHROPIC_ERROR_STATUS, type);

/** An error body; its type is read as a plain string, since Anthropic adds types. */
export const AnthropicErrorBody = z.looseObject({
  type: z.literal("error"),
  error: z.looseObject({ type: z.string(), message: z.string() }),
});
export type AnthropicErrorBody = z.infer<typeof AnthropicErrorBody>;

export function anthropicErrorBody(type: AnthropicErrorType, message: string): AnthropicErrorBody {
  return { type: "error", error: { type, message } };
}

// ---------------------------------------------------------------------------------------------------------------
// Stream events.

export const ContentBlockDelta = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text_delta"), text: z.string() }),
  z.looseObject({ type: z.literal("input_json_delta"), partial_json: z.string() }),
  z.looseObject({ type: z.literal("thinking_delta"), thinking: z.string() }),
  z.looseObject({ type: z.literal("signature_delta"), signature: z.string() }),
  z.looseObject({ type: z.literal("citations_delta"), citation: z.unknown() }),
]);
export type ContentBlockDelta = z.infer<typeof ContentBlockDelta>;

export const MessageStreamEvent = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: AnthropicMessage }),
  z.looseObject({ type: z.literal("content_block_start"), index: z.number().int(), content_block: ContentBlock }),
  z.looseObject({ type: z.literal("content_block_delta"), index: z.number().int(), delta: ContentBlockDelta }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number().int() }),
  z.looseObject({
    type: z.literal("message_delta"),
    delta: z.looseObject({ stop_reason: StopReason.nullable(), stop_sequence: z.string().nullable().optional() }),
    usage: z.looseObject({
      output_tokens: z.number(),
      input_tokens: z.number().nullable().optional(),
      cache_creation_input_tokens: z.number().nullable().optional(),
      cache_read_input_tokens: z.number().nullable().optional(),
    }),
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
  z.looseObject({ type: z.literal("error"), error: z.looseObject({ type: z.string(), message: z.string() }) }),
]);
export type MessageStreamEvent = z.infer<typeof MessageStreamEvent>;

// OpenAI's chat completions wire, one set of shapes for all of aptix: the messages and tools a request carries
// (the agent's door reads them, the offline demo model answers them, the loop sends them), and the completion,
// chunk and usage an answer is made of (the loop reads them from an upstream; the agent's door, the demo model and
// the Workers AI adapter write them, with the builders below, so the three answer alike).
import { z } from "zod";
import type { TokenUsage } from "./turn";

// ---------------------------------------------------------------------------------------------------------------
// Requests: what a client sends, read leniently (fields aptix does not use pass), and what the loop sends.

/** A part of a message's content: text, or another kind (an image, say) whose text is absent. */
export const ChatContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** A message's content: a string, parts, or nothing (an assistant message with tool calls only). */
export const chatContent = <P extends z.ZodType>(part: P) =>
  z.union([z.string(), z.array(part), z.null()], { error: "must be a string, an array of text parts, or null" });
export const ChatContent = chatContent(ChatContentPart);
export type ChatContent = z.infer<typeof ChatContent>;

/** A tool call of an assistant message, as clients send it back. */
export const ChatToolCallIn = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

/** Every role a client sends, with content of `part`s; fields aptix does not read (name, refusal...) pass. */
export const chatMessageIn = <P extends z.ZodType>(part: P) => {
  const content = chatContent(part);
  return z.discriminatedUnion("role", [
    z.looseObject({ role: z.literal("system"), content }),
    z.looseObject({ role: z.literal("developer"), content }),
    z.looseObject({ role: z.literal("user"), content }),
    z.looseObject({
      role: z.literal("assistant"),
      content: content.optional(),
      tool_calls: z.array(ChatToolCallIn).nullable().optional(),
    }),
    z.looseObject({ role: z.literal("tool"), tool_call_id: z.string().min(1), content }),
  ]);
};
export const ChatMessageIn = chatMessageIn(ChatContentPart);
export type ChatMessageIn = z.infer<typeof ChatMessageIn>;

/** A function tool a client declares. */
export const ChatFunctionTool = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: z.string(),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

/** Which tool the model must call: none, any, at least one, or the one named. */
export const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
]);

/** A chat completions request; fields aptix does not use (temperature, n...) are accepted. */
export const ChatCompletionRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessageIn).min(1, "needs at least one message"),
  tools: z.array(ChatFunctionTool).nullable().optional(),
  tool_choice: ToolChoice.optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** A part of a user message as the loop sends it: text, or an image (a base64 data URL) for a route that reads images. */
export type ChatUserPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

/** A message as the loop sends it: text content (a user's may carry images), and an assistant's tool calls. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatUserPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAIToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** A user message's text as a model without images reads it: the string, or its text parts a line each. */
export function userText(content: string | ChatUserPart[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

/** A tool as the loop offers it. */
export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A content's text: a string as it is, parts' text joined by `separator`, nothing as "". */
export function textOfContent(content: ChatContent | undefined, separator = ""): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .map((part) => part.text ?? "")
    .filter(Boolean)
    .join(separator);
}

// ---------------------------------------------------------------------------------------------------------------
// Answers: a completion and its stream's chunks, as an upstream sends them (read by the loop) and as aptix writes
// them.

/**
 * OpenAI's usage object, read as the loop counts it: `prompt_tokens` counts every input token, and
 * `prompt_tokens_details.cached_tokens` those of them read from the prompt cache.
 */
export const UsageJson = z
  .object({
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    total_tokens: z.number(),
    prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
  })
  .transform((u) => {
    const cached = u.prompt_tokens_details?.cached_tokens;
    return {
      promptTokens: u.prompt_tokens,
      completionTokens: u.completion_tokens,
      totalTokens: u.total_tokens,
      ...(cached != null ? { cachedInputTokens: cached } : {}),
    };
  });

/** A `chat.completion` as the loop reads it: its first choice's message and finish, and the usage. */
export const ChatCompletionJson = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) }))
            .optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: UsageJson.nullable().optional(),
});

/** A `chat.completion.chunk` as the loop reads it: choices' deltas (text, tool call fragments), usage, or an error. */
export const ChatCompletionChunkJson = z
  .object({
    choices: z
      .array(
        z.object({
          delta: z
            .object({
              content: z.string().nullable().optional(),
              tool_calls: z
                .array(
                  z.object({
                    index: z.number(),
                    id: z.string().optional(),
                    function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
                  }),
                )
                .optional(),
            })
            .optional(),
          finish_reason: z.string().nullable().optional(),
        }),
      )
      .optional(),
    usage: UsageJson.nullable().optional(),
    error: z.object({ message: z.string() }).optional(),
  })
  // A chunk carries choices, usage or an error; any other JSON object is not a chat completion chunk.
  .refine((c) => c.choices !== undefined || c.usage != null || c.error !== undefined, "is not a chunk");

/** What every completion and chunk of one answer repeats. */
export interface CompletionBase {
  id: string;
  created: number;
  model: string;
}

export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of `prompt_tokens`, those read from the prompt cache (absent when the model did not say). */
  prompt_tokens_details?: { cached_tokens: number };
}

/** Our token usage as OpenAI writes it (the cache's reads too; OpenAI's usage has no field for its writes). */
export function openAIUsage(usage: TokenUsage): OpenAIUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedInputTokens != null ? { prompt_tokens_details: { cached_tokens: usage.cachedInputTokens } } : {}),
  };
}

/** A whole answer as a `chat.completion`; text that is empty beside tool calls is `null`, as OpenAI sends it. */
export function chatCompletion(
  base: CompletionBase,
  answer: { content: string | null; toolCalls: readonly OpenAIToolCall[]; finish: string; usage?: OpenAIUsage },
) {
  const { content, toolCalls, finish, usage } = answer;
  return {
    id: base.id,
    object: "chat.completion" as const,
    created: base.created,
    model: base.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant" as const,
          content: content === "" && toolCalls.length > 0 ? null : content,
          ...(toolCalls.length > 0 ? { tool_calls: [...toolCalls] } : {}),
          refusal: null,
        },
        finish_reason: finish,
        logprobs: null,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/**
 * One `chat.completion.chunk` as an SSE event. `usageField`: a stream that will end with a usage event carries
 * `usage: null` on every other chunk, as OpenAI's does.
 */
/** What one chunk adds to the answer. */
export interface ChatChunkDelta {
  role?: "assistant";
  content?: string;
  tool_calls?: Array<{ index: number; id?: string; type?: "function"; function: { name?: string; arguments: string } }>;
}

/** A `chat.completion.chunk` as an object: one choice's delta and finish reason. */
export function chunkJson(
  base: CompletionBase,
  delta: ChatChunkDelta,
  finish: string | null = null,
  usageField = false,
) {
  return {
    id: base.id,
    object: "chat.completion.chunk" as const,
    created: base.created,
    model: base.model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(usageField ? { usage: null } : {}),
  };
}
export type ChatChunkJson = Omit<ReturnType<typeof chunkJson>, "choices" | "usage"> & {
  choices: ReturnType<typeof chunkJson>["choices"];
  usage?: OpenAIUsage | null;
};

export function chunkEvent(
  base: CompletionBase,
  delta: ChatChunkDelta,
  finish: string | null = null,
  usageField = false,
): string {
  return `data: ${JSON.stringify(chunkJson(base, delta, finish, usageField))}\n\n`;
}

/** The last chunk of a stream whose client asked for usage: no choices, the usage. */
export function usageChunkJson(base: CompletionBase, usage: OpenAIUsage): ChatChunkJson {
  return { ...chunkJson(base, {}), choices: [], usage };
}

export function usageEvent(base: CompletionBase, usage: OpenAIUsage): string {
  return `data: ${JSON.stringify(usageChunkJson(base, usage))}\n\n`;
}

/** The event that ends every stream. */
export const DONE_EVENT = "data: [DONE]\n\n";

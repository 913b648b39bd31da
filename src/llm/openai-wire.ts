// The OpenAI chat completion shapes aptix writes as a server: the agent's door (/agent/v1), the offline demo
// model's OpenAI face and Workers AI's (workers-ai-openai-face.ts). One builder each for a `chat.completion`, a
// `chat.completion.chunk` event and the usage event, so the three answer alike (fields as OpenAI writes them).

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
export function chunkEvent(
  base: CompletionBase,
  delta: Record<string, unknown>,
  finish: string | null = null,
  usageField = false,
): string {
  return `data: ${JSON.stringify({
    id: base.id,
    object: "chat.completion.chunk",
    created: base.created,
    model: base.model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...(usageField ? { usage: null } : {}),
  })}\n\n`;
}

/** The last chunk of a stream whose client asked for usage: no choices, the usage. */
export function usageEvent(base: CompletionBase, usage: OpenAIUsage): string {
  return `data: ${JSON.stringify({
    id: base.id,
    object: "chat.completion.chunk",
    created: base.created,
    model: base.model,
    choices: [],
    usage,
  })}\n\n`;
}

/** The event that ends every stream. */
export const DONE_EVENT = "data: [DONE]\n\n";

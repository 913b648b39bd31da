// Token usage the upstream reports (a JSON answer's `usage`, a stream's `include_usage` chunk, the Responses
// API's `response.completed` event, or Anthropic's `message_start` and `message_delta` events), read from a copy
// on the side and written to D1 later.
import { createParser } from "eventsource-parser";
import { z } from "zod";
import type { TokenUsage } from "../wire/turn";

const count = z.number().int().nonnegative();
/** Anthropic counts the cache's writes and reads apart from `input_tokens`: all three are input. */
function inputTokensOf(u: {
  input_tokens?: number | null | undefined;
  cache_creation_input_tokens?: number | null | undefined;
  cache_read_input_tokens?: number | null | undefined;
}): number | undefined {
  if (u.input_tokens == null) return undefined;
  return u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

/** Of the input, what was read from and written to the provider's prompt cache, as the provider said it. */
function cacheCounts(read: number | null | undefined, written: number | null | undefined): Partial<TokenUsage> {
  return {
    ...(read != null ? { cachedInputTokens: read } : {}),
    ...(written != null ? { cacheWriteInputTokens: written } : {}),
  };
}

const Details = z.object({ cached_tokens: count.nullish() }).nullish();

// Chat and legacy completions and embeddings say prompt/completion (the cache's reads in
// `prompt_tokens_details.cached_tokens`); the Responses API says input/output (`input_tokens_details.cached_tokens`);
// Anthropic's Messages API says input/output with the cache's reads and writes apart.
const UsageJson = z
  .object({
    prompt_tokens: count.optional(),
    completion_tokens: count.optional(),
    input_tokens: count.optional(),
    output_tokens: count.optional(),
    total_tokens: count.optional(),
    cache_creation_input_tokens: count.nullish(),
    cache_read_input_tokens: count.nullish(),
    prompt_tokens_details: Details,
    input_tokens_details: Details,
  })
  .transform((u): TokenUsage | null => {
    const prompt = u.prompt_tokens ?? inputTokensOf(u);
    const completion = u.completion_tokens ?? u.output_tokens ?? 0;
    if (prompt === undefined && u.total_tokens === undefined) return null;
    const promptTokens = prompt ?? 0;
    const read =
      u.cache_read_input_tokens ?? u.prompt_tokens_details?.cached_tokens ?? u.input_tokens_details?.cached_tokens;
    return {
      promptTokens,
      completionTokens: completion,
      totalTokens: u.total_tokens ?? promptTokens + completion,
      ...cacheCounts(read, u.cache_creation_input_tokens),
    };
  });
const WithUsage = z.object({
  usage: UsageJson.nullish(),
  response: z.object({ usage: UsageJson.nullish() }).nullish(),
  // Anthropic's `message_start` event.
  message: z.object({ usage: UsageJson.nullish() }).nullish(),
});

/** The usage a parsed answer or chunk carries, if any. */
export function usageOf(value: unknown): TokenUsage | null {
  const parsed = WithUsage.safeParse(value);
  if (!parsed.success) return null;
  return parsed.data.usage ?? parsed.data.response?.usage ?? parsed.data.message?.usage ?? null;
}

/**
 * Anthropic's `message_delta`: its usage has the output tokens so far (and, from newer API versions, the input
 * tokens and the cache's again); the input counted at `message_start` stands unless it says them.
 */
const MessageDelta = z.object({
  type: z.literal("message_delta"),
  usage: z.object({
    output_tokens: count,
    input_tokens: count.nullish(),
    cache_creation_input_tokens: count.nullish(),
    cache_read_input_tokens: count.nullish(),
  }),
});

/** The usage of a stream so far, after one more parsed event. */
function streamUsage(before: TokenUsage | null, value: unknown): TokenUsage | null {
  const delta = MessageDelta.safeParse(value);
  if (!delta.success) return usageOf(value) ?? before;
  const said = delta.data.usage;
  const promptTokens = inputTokensOf(said) ?? before?.promptTokens ?? 0;
  const completionTokens = said.output_tokens;
  const again = said.input_tokens != null;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    ...cacheCounts(
      again ? said.cache_read_input_tokens : before?.cachedInputTokens,
      again ? said.cache_creation_input_tokens : before?.cacheWriteInputTokens,
    ),
  };
}

export function usageOfJson(bytes: ArrayBuffer | Uint8Array): TokenUsage | null {
  try {
    return usageOf(JSON.parse(new TextDecoder().decode(bytes)));
  } catch {
    return null;
  }
}

/**
 * Watches an event stream's bytes for the last usage it reports, and counts the characters of the answer so far
 * (text and tool call arguments: what an estimate of a stream cut short is made from). It only reads: the bytes
 * reach the client before `push` sees them, and only events that mention usage or carry a delta are parsed.
 */
export class SseUsageScanner {
  private readonly decoder = new TextDecoder();
  private readonly parser = createParser({ onEvent: (event) => this.event(event.data) });
  usage: TokenUsage | null = null;
  /** Characters of answer text and tool call arguments seen so far. */
  answerChars = 0;

  push(chunk: Uint8Array): void {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
  }

  private event(data: string): void {
    const hasUsage = data.includes('"usage"');
    if (!hasUsage && !data.includes('"delta"')) return;
    try {
      const parsed: unknown = JSON.parse(data);
      if (hasUsage) this.usage = streamUsage(this.usage, parsed);
      this.answerChars += deltaChars(parsed);
    } catch {
      // An event that is not JSON carries no usage; the client gets it unchanged all the same.
    }
  }
}

const Delta = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(z.object({ function: z.object({ arguments: z.string().nullish() }).nullish() }))
              .nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  // The Responses API streams `response.output_text.delta` events with the text in `delta`; Anthropic's
  // `content_block_delta` has an object there, with its `text` or its tool input's `partial_json`.
  delta: z.union([z.string(), z.object({ text: z.string().nullish(), partial_json: z.string().nullish() })]).nullish(),
});

function deltaChars(value: unknown): number {
  const parsed = Delta.safeParse(value);
  if (!parsed.success) return 0;
  const delta = parsed.data.delta;
  let chars =
    typeof delta === "string" ? delta.length : (delta?.text?.length ?? 0) + (delta?.partial_json?.length ?? 0);
  for (const choice of parsed.data.choices ?? []) {
    chars += choice.delta?.content?.length ?? 0;
    for (const call of choice.delta?.tool_calls ?? []) chars += call.function?.arguments?.length ?? 0;
  }
  return chars;
}

// Token usage the upstream reports (a JSON answer's `usage`, a stream's `include_usage` chunk or the
// Responses API's `response.completed` event), read from a copy on the side and written to D1 later.
import { createParser } from "eventsource-parser";
import { z } from "zod";
import type { TokenUsage } from "../wire/turn";

const count = z.number().int().nonnegative();
// Chat and legacy completions and embeddings say prompt/completion; the Responses API says input/output.
const UsageJson = z
  .object({
    prompt_tokens: count.optional(),
    completion_tokens: count.optional(),
    input_tokens: count.optional(),
    output_tokens: count.optional(),
    total_tokens: count.optional(),
  })
  .transform((u): TokenUsage | null => {
    const prompt = u.prompt_tokens ?? u.input_tokens;
    const completion = u.completion_tokens ?? u.output_tokens ?? 0;
    if (prompt === undefined && u.total_tokens === undefined) return null;
    const promptTokens = prompt ?? 0;
    return { promptTokens, completionTokens: completion, totalTokens: u.total_tokens ?? promptTokens + completion };
  });
const WithUsage = z.object({
  usage: UsageJson.nullish(),
  response: z.object({ usage: UsageJson.nullish() }).nullish(),
});

/** The usage a parsed answer or chunk carries, if any. */
export function usageOf(value: unknown): TokenUsage | null {
  const parsed = WithUsage.safeParse(value);
  if (!parsed.success) return null;
  return parsed.data.usage ?? parsed.data.response?.usage ?? null;
}

export function usageOfJson(bytes: ArrayBuffer): TokenUsage | null {
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
      if (hasUsage) this.usage = usageOf(parsed) ?? this.usage;
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
  // The Responses API streams `response.output_text.delta` events with the text in `delta`.
  delta: z.string().nullish(),
});

function deltaChars(value: unknown): number {
  const parsed = Delta.safeParse(value);
  if (!parsed.success) return 0;
  let chars = parsed.data.delta?.length ?? 0;
  for (const choice of parsed.data.choices ?? []) {
    chars += choice.delta?.content?.length ?? 0;
    for (const call of choice.delta?.tool_calls ?? []) chars += call.function?.arguments?.length ?? 0;
  }
  return chars;
}

// The scripted OpenAI-compatible upstream's prompt cache, as OpenAI documents it
// (https://platform.openai.com/docs/guides/prompt-caching): automatic for prompts of 1,024 tokens or more, a hit
// is the longest prefix the prompt shares with an earlier request of the same model, counted in steps of 128 tokens
// (1,024, 1,152, 1,280, ...), and reported as `prompt_tokens_details.cached_tokens`. The prompt is read as OpenAI
// renders it: the tools, then the messages, in the request's own order. Tokens are counted by one documented rule:
// a quarter of the characters of that text, rounded up (so a step of 128 tokens is 512 characters).
import { createHash } from "node:crypto";

export const MIN_CACHED_TOKENS = 1024;
export const CACHE_STEP_TOKENS = 128;
const CHARS_PER_TOKEN = 4;

/** The prompt's text as the cache sees it: tools first, then messages. */
export function promptTextOf(request: { tools?: unknown; messages?: unknown }): string {
  return `${JSON.stringify(request.tools ?? [])}${JSON.stringify(request.messages ?? [])}`;
}

export const promptTokensOf = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

export class OpenAIPromptCache {
  /** Hashes of every cached prefix (per model), at each 128-token step from 1,024. */
  private readonly prefixes = new Set<string>();

  /** Of the prompt `text`, the tokens read from the cache; the prompt's own prefixes are cached for later requests. */
  use(model: string, text: string): number {
    const key = (chars: number) =>
      createHash("sha256").update(model).update("\u0000").update(text.slice(0, chars)).digest("hex");
    const tokens = promptTokensOf(text);
    let cached = 0;
    for (let step = MIN_CACHED_TOKENS; step <= tokens; step += CACHE_STEP_TOKENS) {
      const chars = step * CHARS_PER_TOKEN;
      if (chars > text.length) break;
      const hash = key(chars);
      if (this.prefixes.has(hash)) cached = step;
      else this.prefixes.add(hash);
    }
    return cached;
  }
}

// The model's own count of a prompt it refused as too long for its context, read from the refusal's words (the
// ModelError's detail carries the upstream's body, redacted): the one report a failed call gives, so the token
// calibration can learn from it and the next request fits (token-calibration.ts).
import { ModelError } from "./chat-model";

/** OpenAI: "you requested 9000 tokens (8000 in the messages, 500 in the functions, 500 in the completion)". */
const OPENAI_PARTS = /\((\d+) in the messages(?:, (\d+) in the functions)?, \d+ in the completion\)/i;
/** OpenAI: "However, your messages resulted in 9000 tokens" (with tools: "... resulted in 9000 tokens (8500 in ..."). */
const OPENAI_RESULTED = /your messages resulted in (\d+) tokens/i;
/** Anthropic: "prompt is too long: 250000 tokens > 200000 maximum". */
const ANTHROPIC_TOO_LONG = /prompt is too long: (\d+) tokens > \d+ maximum/i;

/** The prompt tokens the model counted in a refusal for length; null when its words do not say. */
export function refusedPromptTokens(error: unknown): number | null {
  if (!(error instanceof ModelError) || error.code !== "context_length_exceeded" || error.status === null) return null;
  const text = error.detail;
  const parts = OPENAI_PARTS.exec(text);
  if (parts) return Number(parts[1]) + Number(parts[2] ?? 0);
  const found = OPENAI_RESULTED.exec(text) ?? ANTHROPIC_TOO_LONG.exec(text);
  return found ? Number(found[1]) : null;
}

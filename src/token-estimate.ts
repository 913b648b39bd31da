// The one estimate of tokens where no tokenizer answers (prompt and history budgets, meter reservations, the demo
// model's usage): about four characters a token for English prose and JSON. An estimate, never a bill.
export const CHARS_PER_TOKEN = 4;

/** The tokens of a text, or of a number of characters. */
export function estimateTokens(text: string | number): number {
  return Math.ceil((typeof text === "number" ? text : text.length) / CHARS_PER_TOKEN);
}

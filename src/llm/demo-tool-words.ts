// The offline demo model's reading of plain words: which offered tool a message asks for without naming it, picked
// as a real model would, by the words of the tool's name and of its description ("look up the weather in Paris"
// asks for `get_weather`, "The weather in a city."), so a tool added by docs/guides/add-a-tool.md is reachable.

import type { ChatTool } from "../wire/openai";

/** Words that say nothing about which tool is meant: small words, verbs of asking, the names' common prefixes. */
const STOP_WORDS = new Set(
  (
    "a an and are as at be by can could do does for from get give has have how i in is it its let me my not of on or " +
    "our please set show tell that the their them then there these this those to up us use using was we what when " +
    "where which who why will with would you your agent tool tools call run look find want need know about some any " +
    "one its it's user users returns return create creates new"
  ).split(" "),
);

/** A word as compared: lowercase, a plural's `s` dropped ("words" and "word" are one word). */
function stem(word: string): string {
  return word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
}

/** The meaningful words of a text, stemmed, each once. */
export function meaningfulWords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[a-z][a-z']*/g) ?? [];
  return new Set(words.filter((w) => w.length > 1 && !STOP_WORDS.has(w)).map(stem));
}

/** A tool's own name without an MCP server's prefix (`everything__get_sum` is `get_sum`). */
export function ownName(name: string): string {
  return name.includes("__") ? name.split("__").slice(1).join("__") : name;
}

/** Points for a message word found in the tool's name, and in its description. */
const NAME_WORD_POINTS = 2;
const DESCRIPTION_WORD_POINTS = 1;
/** A tool is chosen with at least one word of its name said, or two of its description. */
export const PLAIN_WORDS_THRESHOLD = 2;

/** How well `said` asks for `tool`: the points of each meaningful word it shares with the tool's name and description. */
export function plainWordsScore(tool: ChatTool, said: string): number {
  const nameWords = meaningfulWords(ownName(tool.function.name).replace(/[-_]+/g, " "));
  const descriptionWords = meaningfulWords(tool.function.description ?? "");
  let score = 0;
  for (const word of meaningfulWords(said)) {
    if (nameWords.has(word)) score += NAME_WORD_POINTS;
    if (descriptionWords.has(word)) score += DESCRIPTION_WORD_POINTS;
  }
  return score;
}

/**
 * The tool `said` asks for in plain words: the best-scoring of `tools` at or above the threshold, or null when none
 * reaches it or two tie (a real model would ask which was meant; the demo answers with its help).
 */
export function toolForPlainWords(tools: readonly ChatTool[], said: string): ChatTool | null {
  const scored = tools
    .map((tool) => ({ tool, score: plainWordsScore(tool, said) }))
    .filter((s) => s.score >= PLAIN_WORDS_THRESHOLD)
    .sort((a, b) => b.score - a.score);
  const [best, next] = scored;
  if (!best || (next && next.score === best.score)) return null;
  return best.tool;
}

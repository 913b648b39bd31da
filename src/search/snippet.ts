// A found message's snippet: up to SNIPPET_WORDS words of its text around the first match, `…` where it is cut,
// each matching word between two marks (control characters no indexed text holds: src/session/message-feed.ts takes them out),
// and the two ways it is shown: HTML-safe with <mark> for the route, plain text with « » for the model. Made here
// from the row's text rather than by FTS5's snippet(), which would run the query again for each row of the page
// (a prefix query's doclists merged 20 times over).
import type { SearchWords } from "./search-query";

export const SNIPPET_OPEN = "\u0001";
export const SNIPPET_CLOSE = "\u0002";

/** Words a snippet shows at most; the first match comes after SNIPPET_LEAD words of what led to it. */
export const SNIPPET_WORDS = 16;
const SNIPPET_LEAD = 4;

/** A word as the index compares it (unicode61 with remove_diacritics 2): lower case, without its accents. */
function folded(word: string): string {
  return word.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

/** `text`'s snippet for the words a search matched (the last also as a prefix when it is one), marked. */
export function markedSnippet(text: string, words: SearchWords): string {
  const { prefixLast } = words;
  const terms = words.terms.map(folded);
  const last = terms.at(-1) ?? "";
  const exact = new Set(prefixLast ? terms.slice(0, -1) : terms);
  const matches = (word: string) => {
    const f = folded(word);
    return exact.has(f) || (prefixLast && last !== "" && f.startsWith(last));
  };
  const tokens = [...text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)];
  const first = Math.max(
    0,
    tokens.findIndex((w) => matches(w[0])),
  );
  const start = Math.max(0, first - SNIPPET_LEAD);
  const end = Math.min(tokens.length, start + SNIPPET_WORDS);
  let out = "";
  // From the text's start when the snippet is (what comes before its first word, a quote or a bracket, too).
  let at = start === 0 ? 0 : (tokens[start]?.index ?? 0);
  for (const word of tokens.slice(start, end)) {
    const index = word.index ?? 0;
    out += text.slice(at, index);
    out += matches(word[0]) ? `${SNIPPET_OPEN}${word[0]}${SNIPPET_CLOSE}` : word[0];
    at = index + word[0].length;
  }
  const lastWord = tokens[end - 1];
  // What follows the last word up to the next word (a full stop, a closing quote) belongs to it.
  if (end === tokens.length) out += text.slice(at);
  else if (lastWord) out += (text.slice(at).match(/^[^\p{L}\p{N}\p{M}\s]*/u) ?? [""])[0];
  const body = out.replace(/\s+/g, " ").trim();
  return `${start > 0 ? "…" : ""}${body}${end < tokens.length ? "…" : ""}`;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** The snippet as HTML: its text escaped, each match between <mark> and </mark>. */
export function htmlSnippet(marked: string): string {
  return marked
    .replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c)
    .replaceAll(SNIPPET_OPEN, "<mark>")
    .replaceAll(SNIPPET_CLOSE, "</mark>");
}

/** The snippet as plain text, each match between « and ». */
export function plainSnippet(marked: string): string {
  return marked.replaceAll(SNIPPET_OPEN, "«").replaceAll(SNIPPET_CLOSE, "»");
}

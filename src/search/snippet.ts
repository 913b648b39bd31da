// A snippet's matches as FTS5 marks them (two control characters no indexed text holds: message-feed.ts takes them
// out), and the two ways they are shown: HTML-safe with <mark> for the route, plain text with « » for the model.

export const SNIPPET_OPEN = "\u0001";
export const SNIPPET_CLOSE = "\u0002";

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

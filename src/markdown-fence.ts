// Markdown around text we did not write, which that text cannot break out of: a code fence it cannot close early, a
// code span it cannot close early, and plain text it cannot turn into Markdown or HTML. The model's view of an
// attached file and the session's Markdown export use them.

/** `text` fenced by more backticks than its longest run of them (at least three), with an optional language. */
export function fenced(text: string, language = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

/**
 * `text` (one line) as an inline code span: delimited by more backticks than its longest run of them, and padded
 * with a space where it starts or ends with a backtick or a space (CommonMark takes one such space off each side).
 */
export function codeSpan(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? " " : "";
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/**
 * `text` as literal inline text (a heading's, a list item's): every ASCII punctuation character is backslash-escaped,
 * which CommonMark allows for each of them, so none starts a heading, a link, emphasis, code or an HTML tag or entity;
 * a line break becomes a space (the text stays on its line).
 */
export function markdownText(text: string): string {
  return text.replace(/[\r\n]+/g, " ").replace(/[!-/:-@[-`{-~]/g, "\\$&");
}

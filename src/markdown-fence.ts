// A Markdown code fence that text cannot close early: the model's view of an attached file and the session's Markdown
// export both fence text they did not write.

/** `text` fenced by more backticks than its longest run of them (at least three), with an optional language. */
export function fenced(text: string, language = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

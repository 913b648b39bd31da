// The one rule for text a person types that is shown back to people: a name or title is one line, a description is
// prose; neither may hold control characters, bidirectional overrides or isolates (which reorder what a reader sees,
// as in Trojan Source, CVE-2021-42574, or `photo\u202Egnp.exe`), or an unpaired UTF-16 surrogate (not text at all).
import type { z } from "zod";

/**
 * Bidirectional embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). The marks U+200E, U+200F and
 * U+061C are not among them: right-to-left writers type them to place punctuation and digits, and they reorder no
 * letters.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;
/** Under the u flag a surrogate matches only where it is unpaired: a pair is one code point, outside this class. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;
/** A control character (C0, DEL, C1), a line or paragraph separator, a bidi control or an unpaired surrogate. */
const REFUSED = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069\p{Cs}]/gu;

const codePoint = (char: string) => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Prose keeps its tabs and line breaks (\n, \r\n, U+2028, U+2029); a name has none. */
function isProseBreak(text: string, char: string, at: number): boolean {
  return (
    char === "\t" || char === "\n" || char === "\u2028" || char === "\u2029" || (char === "\r" && text[at + 1] === "\n")
  );
}

/** What is wrong with the text as a name (one line) or as prose; null when nothing is. */
export function typedTextProblem(text: string, kind: "name" | "prose"): string | null {
  for (const match of text.matchAll(REFUSED)) {
    const char = match[0];
    if (kind === "prose" && isProseBreak(text, char, match.index)) continue;
    if (BIDI_CONTROL.test(char))
      return `must not contain bidirectional overrides or isolates (it has ${codePoint(char)})`;
    if (UNPAIRED_SURROGATE.test(char))
      return `must be well-formed Unicode (it has an unpaired surrogate, ${codePoint(char)})`;
    return kind === "name"
      ? `must be one line without control characters (it has ${codePoint(char)})`
      : `must not contain control characters other than tabs and line breaks (it has ${codePoint(char)})`;
  }
  return null;
}

/** For `.superRefine`: a name or title a person types (one line), e.g. `z.string().trim().max(80).superRefine(typedName)`. */
export function typedName(text: string, ctx: z.RefinementCtx<string>): void {
  const problem = typedTextProblem(text, "name");
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
}

/** For `.superRefine`: a description a person types (prose: tabs and line breaks allowed). */
export function typedProse(text: string, ctx: z.RefinementCtx<string>): void {
  const problem = typedTextProblem(text, "prose");
  if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
}

/**
 * Text that was not refused (a message may hold anything) made fit to be a name: control characters and separators
 * become spaces, bidi controls and unpaired surrogates are taken out.
 */
export function asTypedName(text: string): string {
  return text.replace(REFUSED, (char) => (BIDI_CONTROL.test(char) || UNPAIRED_SURROGATE.test(char) ? "" : " "));
}

// The `deny` guardrail's detector: the words an admin lists (whole words or phrases, any case, letters of any
// script) and their regexes (compiled with "iu"). Compiled once per guardrail (a list is kept per isolate, so its
// objects are too). An admin's regex is the one piece of code here an admin writes: nested repetition is refused
// when the list is saved (guardrail-config.ts), patterns are at most MAX_PATTERN_CHARS long, and each regex reads
// the text in windows of DENY_WINDOW_CHARS, so no match attempt runs over more than that however long the text.
import type { GuardrailSpec } from "./guardrail-config";
import { type Span, spansOf } from "./guardrail-span";

/** The most text one match attempt of an admin's regex reads. */
export const DENY_WINDOW_CHARS = 4096;
/** How far windows overlap: a match up to this long is found wherever it falls. */
export const DENY_WINDOW_OVERLAP = 256;

interface Compiled {
  words: RegExp | null;
  patterns: RegExp[];
}

const compiled = new WeakMap<object, Compiled>();

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** One regex for all the words: each a whole word (no letter, digit or `_` either side), spaces matching any run. */
function wordsRegex(words: readonly string[]): RegExp | null {
  if (words.length === 0) return null;
  const alternatives = [...words]
    .sort((a, b) => b.length - a.length)
    .map((word) => word.trim().split(/\s+/).map(escapeRegex).join("\\s+"));
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives.join("|")})(?![\\p{L}\\p{N}_])`, "giu");
}

function compile(spec: Pick<GuardrailSpec, "words" | "patterns">): Compiled {
  // Keyed by the lists themselves: a copy of a guardrail with other points (the passthrough's) shares them.
  const key = spec.words ?? spec.patterns ?? spec;
  const hit = compiled.get(key);
  if (hit) return hit;
  const out = {
    words: wordsRegex(spec.words ?? []),
    patterns: (spec.patterns ?? []).map((pattern) => new RegExp(pattern, "giu")),
  };
  compiled.set(key, out);
  return out;
}

/** The matches of an admin's regex, read window by window. */
function windowedSpans(text: string, regex: RegExp): Span[] {
  if (text.length <= DENY_WINDOW_CHARS) return spansOf(text, regex, "deny");
  const out: Span[] = [];
  const step = DENY_WINDOW_CHARS - DENY_WINDOW_OVERLAP;
  for (let offset = 0; offset < text.length; offset += step) {
    for (const span of spansOf(text.slice(offset, offset + DENY_WINDOW_CHARS), regex, "deny")) {
      out.push({ start: span.start + offset, end: span.end + offset, type: "deny" });
    }
    if (offset + DENY_WINDOW_CHARS >= text.length) break;
  }
  return out;
}

/** What `spec`'s words and regexes find in `text` (overlaps not yet settled). */
export function detectDenied(text: string, spec: Pick<GuardrailSpec, "words" | "patterns">): Span[] {
  const { words, patterns } = compile(spec);
  return [...(words ? spansOf(text, words, "deny") : []), ...patterns.flatMap((regex) => windowedSpans(text, regex))];
}

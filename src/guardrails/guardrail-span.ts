// A piece of text a detector found ([start, end) in UTF-16 units, as String.slice counts) and what it is; and the
// one way overlapping finds are settled: the earliest wins, the longer of two starting together.

export interface Span {
  start: number;
  end: number;
  /** What was found: a pii entity (`email`), a secret's provider (`openai`), or `deny`. */
  type: string;
}

/** The spans in text order, none overlapping another (an earlier or longer one is kept). */
export function settleSpans(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const span of sorted) {
    const last = out[out.length - 1];
    if (last && span.start < last.end) continue;
    out.push(span);
  }
  return out;
}

/** Every match of a global regex as a span of `type`, kept when `accept` says so. */
export function spansOf(
  text: string,
  regex: RegExp,
  type: string,
  accept: (match: RegExpMatchArray) => boolean = () => true,
): Span[] {
  const out: Span[] = [];
  for (const match of text.matchAll(regex)) {
    if (match[0].length === 0 || !accept(match)) continue;
    const start = match.index ?? 0;
    out.push({ start, end: start + match[0].length, type });
  }
  return out;
}

// When a new memory is the same fact as an old one, or corrects it: plain functions over two texts, no storage. A
// save that matches an old memory updates it instead of adding a second (memory-store.ts); docs/memory.md lists the
// rules.

/** Content words overlapping at least this much (Jaccard: shared / all) make two memories one fact. */
export const OVERLAP_THRESHOLD = 0.6;

/**
 * Words that carry no fact of their own: they are left out of the overlap, and a subject made of them alone ("I"
 * in "I am ...") names nothing, so it cannot be contradicted.
 */
const STOPWORDS = new Set(
  (
    "a an the and or but of to in on at for with by from as is are am was were be been being it its this that " +
    "these those i me my mine we us our you your he him his she her they them their do does did not no so very " +
    "really just also than then there here what which who whom whose will would can could should has have had"
  ).split(" "),
);

/** Lower case, punctuation gone, one space between words: two texts that differ only so are equal. */
export function normalise(text: string): string {
  return words(text).join(" ");
}

/** The text's words (letters and digits), lower case. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The words that carry the fact. */
export function contentWords(text: string): Set<string> {
  return new Set(words(text).filter((word) => !STOPWORDS.has(word)));
}

/** Shared content words over all of them (0 when either has none). */
export function overlap(a: string, b: string): number {
  const left = contentWords(a);
  const right = contentWords(b);
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/** The separators that state a subject's value: "X is Y", "X are Y", "X am Y", "X = Y" (the first one found). */
const STATEMENT = /\s(?:is|are|am)\s|=/i;

/**
 * What the text states a value of, and the value ("my favourite colour", "blue"), normalised; null when it states
 * none, or its subject has no content word ("I am ...": every fact about the person would share it).
 */
export function statement(text: string): { subject: string; value: string } | null {
  const match = STATEMENT.exec(text);
  if (!match) return null;
  const subject = normalise(text.slice(0, match.index));
  const value = normalise(text.slice(match.index + match[0].length));
  if (!subject || !value || contentWords(subject).size === 0) return null;
  return { subject, value };
}

/** Why `next` takes the place of `old`, or null when it is a fact of its own. */
export function sameFact(next: string, old: string): "duplicate" | "contradiction" | "overlap" | null {
  if (normalise(next) === normalise(old)) return "duplicate";
  const a = statement(next);
  const b = statement(old);
  if (a && b && a.subject === b.subject && a.value !== b.value) return "contradiction";
  return overlap(next, old) >= OVERLAP_THRESHOLD ? "overlap" : null;
}

/**
 * An FTS5 query that finds texts sharing any word with `text` (each word quoted, so no word is read as FTS5
 * syntax), or null when it has no word. At most `max` words, the content words first.
 */
export function anyWordQuery(text: string, max = 32): string | null {
  const all = [...new Set(words(text))];
  const ranked = [...all.filter((w) => !STOPWORDS.has(w)), ...all.filter((w) => STOPWORDS.has(w))].slice(0, max);
  return ranked.length === 0 ? null : ranked.map((word) => `"${word}"`).join(" OR ");
}

/** An FTS5 query that finds texts with every word of `text` (a search's words), or null when it has no word. */
export function allWordsQuery(text: string, max = 32): string | null {
  const all = [...new Set(words(text))].slice(0, max);
  return all.length === 0 ? null : all.map((word) => `"${word}"`).join(" ");
}

// A person's words as an FTS5 query. What a person types is never FTS5 syntax: each word is quoted (a quote inside
// it doubled), so `"`, `*`, `NEAR(`, `AND`, `-` or a column name are words to find, never operators; the words must
// all match, and the last one also matches as a prefix when it has MIN_PREFIX_CHARS or more (results while the person is
// still typing).

/** The longest query a person may send, in characters. */
export const SEARCH_QUERY_MAX_CHARS = 200;

/** Words a query keeps (the rest are dropped: FTS5's work grows with each phrase). */
const MAX_TERMS = 16;

/** The shortest last word matched as a prefix too (a one- or two-letter prefix would match most of the index). */
const MIN_PREFIX_CHARS = 3;

/**
 * The words of `q`: runs of letters, digits and marks (what the unicode61 tokenizer keeps together). Anything else
 * separates words, and is never passed on.
 */
export function searchTerms(q: string): string[] {
  return (q.normalize("NFC").match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).slice(0, MAX_TERMS);
}

/**
 * The MATCH expression for `q` within the messages of `ownerToken` (src/search/owner-token.ts): null when `q` has no
 * word to look for (only punctuation), which finds nothing.
 */
export function matchExpression(q: string, ownerToken: string): string | null {
  const terms = searchTerms(q);
  if (terms.length === 0) return null;
  const phrases = terms.map(
    (term, i) =>
      `"${term.replaceAll('"', '""')}"${i === terms.length - 1 && [...term].length >= MIN_PREFIX_CHARS ? "*" : ""}`,
  );
  return `owner : ${ownerToken} AND text : (${phrases.join(" AND ")})`;
}

// Whose an indexed message is, as words the full-text index holds beside its text: a search matches its owner's
// token AND the words, so FTS5 intersects two doclists (the person's messages, the word's) instead of ranking every
// match of every person and filtering afterwards. Hashes, not the ids themselves: an id may hold characters the
// tokenizer splits on, and the index then holds nothing a person typed about someone else.

/** Hex characters of SHA-256 a token keeps (96 bits: no two owners of a deployment share one). */
const TOKEN_HEX = 24;

async function hexDigest(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, TOKEN_HEX);
}

/**
 * One person's token: `o` and the hash of org and user. Letters and digits only, so the unicode61 tokenizer keeps it
 * one token (an underscore, as in `o_…`, would split it in two).
 */
export async function personToken(org: string, user: string): Promise<string> {
  return `o${await hexDigest(`person\n${org}\n${user}`)}`;
}

/** An org's token (an org admin's search with all=true): `g` and the hash of the org. */
export async function orgToken(org: string): Promise<string> {
  return `g${await hexDigest(`org\n${org}`)}`;
}

/** The owner column of a message of `user` in `org`: both tokens. */
export async function ownerColumn(org: string, user: string): Promise<string> {
  return `${await personToken(org, user)} ${await orgToken(org)}`;
}

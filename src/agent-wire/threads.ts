// Which session a request to the agent's OpenAI door continues. With the session header, that session, when
// the history agrees with its transcript; without it, the session of this key whose head (the transcript
// after our last answer) is exactly the history before the new message. A history that contradicts its
// session (an edited or regenerated message, another conversation) starts a new session seeded with it:
// an old session is never rewritten.
//
// The session's object checks a history against its own head (src/session/thread-head.ts), so a request reads D1
// only to find the session of a history no one named: the isolate remembers the sessions it answered by their
// heads, and asks D1's agent_threads (written by every session, from any isolate) for the others.
import type { Db } from "../db";
import { keptPerIsolate } from "../isolate-cache";
import { type Meaning, sessionOfHead } from "../session/thread-head";
import type { NewInput } from "./transcript";

export type Thread =
  | {
      kind: "continue";
      sessionId: string;
      /** The head the history ends at, for the session to check (none: only new input was sent, with the header). */
      expect?: string;
      /** Should the session's head not be `expect`: a new session (`new`), or first D1's answer (`lookup`). */
      otherwise: "new" | "lookup";
    }
  | { kind: "new"; seed: Meaning[] }
  | { kind: "refused"; message: string; param: string };

/** The head of the request's history before its new input: the fingerprint after our last answer, if it ends there. */
export function historyHead(meanings: readonly Meaning[], chain: readonly string[], input: NewInput): string | null {
  const last = meanings[input.from - 1];
  return last?.role === "assistant" ? (chain[input.from - 1] ?? null) : null;
}

/** How many of its answers' heads an isolate remembers (the oldest forgotten first). */
const REMEMBERED_HEADS = 1_000;
/** `${keyId}\n${head}` → the session this isolate answered with that head, oldest first. */
const answeredHeads = new Map<string, string>();
keptPerIsolate(() => answeredHeads.clear());

/** This isolate answered `keyId`'s conversation in `sessionId`, leaving it at `head` (and no longer at `before`). */
export function rememberHead(keyId: string, sessionId: string, head: string, before?: string): void {
  if (before !== undefined) answeredHeads.delete(`${keyId}\n${before}`);
  const key = `${keyId}\n${head}`;
  answeredHeads.delete(key);
  answeredHeads.set(key, sessionId);
  if (answeredHeads.size > REMEMBERED_HEADS) answeredHeads.delete(answeredHeads.keys().next().value ?? "");
}

/** The session remembered for a head proved not to be its head. */
export function forgetHead(keyId: string, head: string): void {
  answeredHeads.delete(`${keyId}\n${head}`);
}

/** A history that continues no session: a new session seeded with it, but tool results are refused (they answer nothing). */
export function newThread(meanings: readonly Meaning[], input: NewInput): Thread {
  if (input.type === "tool_results") {
    return {
      kind: "refused",
      message:
        "These tool results answer calls of no conversation this key has here: send the whole conversation as it was answered, or its X-Aptix-Session header.",
      param: `messages.${input.from}`,
    };
  }
  return { kind: "new", seed: meanings.slice(0, input.from).filter((m) => m.role !== "system") };
}

/** The session a request's history leads to, as far as the header and this isolate know it; null: D1 must be asked. */
export function threadAtOnce(
  keyId: string,
  header: string | null,
  meanings: readonly Meaning[],
  chain: readonly string[],
  input: NewInput,
): Thread | null {
  const hasHistory = meanings.slice(0, input.from).some((m) => m.role === "assistant");
  const head = historyHead(meanings, chain, input);
  if (header) {
    // The header's session, sent only the new messages (a client that keeps the session): continued.
    if (!hasHistory) return { kind: "continue", sessionId: header, otherwise: "new" };
    return head ? { kind: "continue", sessionId: header, expect: head, otherwise: "new" } : newThread(meanings, input);
  }
  if (!head) return newThread(meanings, input);
  const remembered = answeredHeads.get(`${keyId}\n${head}`);
  return remembered ? { kind: "continue", sessionId: remembered, expect: head, otherwise: "lookup" } : null;
}

/** The newest session of the key whose head is the history's, as D1 has it (but one that proved not to be). */
export async function lookUpThread(
  db: Db,
  keyId: string,
  meanings: readonly Meaning[],
  chain: readonly string[],
  input: NewInput,
  not?: string,
): Promise<Thread> {
  const head = historyHead(meanings, chain, input);
  // A conversation's head is read where it was written (the primary): a follow-up comes milliseconds after it,
  // and a client of the OpenAI wire carries no bookmark.
  const sessionId = head ? await sessionOfHead(db, keyId, head) : null;
  if (!head || !sessionId || sessionId === not) return newThread(meanings, input);
  return { kind: "continue", sessionId, expect: head, otherwise: "new" };
}

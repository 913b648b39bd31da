// Which session a request to the agent's OpenAI door continues. With the session header, that session, when
// the history agrees with its transcript; without it, the session of this key whose head (the transcript
// after our last answer) is exactly the history before the new message. A history that contradicts its
// session (an edited or regenerated message, another conversation) starts a new session seeded with it:
// an old session is never rewritten.
import type { Db } from "../db";
import { headOfSession, type Meaning, sessionOfHead } from "../session/thread-head";
import type { NewInput } from "./transcript";

export type Thread =
  | { kind: "continue"; sessionId: string }
  | { kind: "new"; seed: Meaning[] }
  | { kind: "refused"; message: string; param: string };

/** The head of the request's history before its new input: the fingerprint after our last answer, if it ends there. */
export function historyHead(meanings: readonly Meaning[], chain: readonly string[], input: NewInput): string | null {
  const last = meanings[input.from - 1];
  return last?.role === "assistant" ? (chain[input.from - 1] ?? null) : null;
}

export async function resolveThread(
  db: Db,
  keyId: string,
  header: string | null,
  meanings: readonly Meaning[],
  chain: readonly string[],
  input: NewInput,
): Promise<Thread> {
  const before = meanings.slice(0, input.from);
  const hasHistory = before.some((m) => m.role === "assistant");
  const head = historyHead(meanings, chain, input);
  if (header) {
    // The header's session, sent only the new messages (a client that keeps the session): continued.
    if (!hasHistory) return { kind: "continue", sessionId: header };
    const recorded = await headOfSession(db, header, keyId);
    if (recorded !== null && head === recorded) return { kind: "continue", sessionId: header };
  } else if (head) {
    const sessionId = await sessionOfHead(db, keyId, head);
    if (sessionId) return { kind: "continue", sessionId };
  }
  if (input.type === "tool_results") {
    return {
      kind: "refused",
      message:
        "These tool results answer calls of no conversation this key has here: send the whole conversation as it was answered, or its X-Aptix-Session header.",
      param: `messages.${input.from}`,
    };
  }
  return { kind: "new", seed: before.filter((m) => m.role !== "system") };
}

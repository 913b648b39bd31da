// Which session a request to the agent's OpenAI door continues. With the session header, that session, when
// the history agrees with its transcript; without it, the session of this key whose head (the transcript
// after our last answer) is exactly the history before the new message. A history that contradicts its
// session (an edited or regenerated message, another conversation) starts a new session seeded with it:
// an old session is never rewritten.
import { z } from "zod";
import type { Db } from "../db";
import type { Meaning } from "../session/chat-turns";
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

// agent_threads' rows, parsed once (snake_case to camelCase).
const HeadRow = z.object({ head: z.string() });
const SessionOfHeadRow = z.object({ session_id: z.string() }).transform((r) => ({ sessionId: r.session_id }));

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
    const row = await db
      .prepare("SELECT head FROM agent_threads WHERE session_id = ? AND key_id = ?")
      .bind(header, keyId)
      .first();
    if (row && head === HeadRow.parse(row).head) return { kind: "continue", sessionId: header };
  } else if (head) {
    const row = await db
      .prepare("SELECT session_id FROM agent_threads WHERE key_id = ? AND head = ? ORDER BY updated_at DESC LIMIT 1")
      .bind(keyId, head)
      .first();
    if (row) return { kind: "continue", sessionId: SessionOfHeadRow.parse(row).sessionId };
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

/** After an answer: the session's head is the history with our answer appended. */
export function headStatement(db: Db, sessionId: string, keyId: string, head: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO agent_threads (session_id, key_id, head) VALUES (?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET key_id = excluded.key_id, head = excluded.head,
         updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    )
    .bind(sessionId, keyId, head);
}

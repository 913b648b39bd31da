// A conversation's head on the agent's OpenAI door: the fingerprint of its transcript as the client holds it (each
// message reduced to what it means, chained), so a client that resends the whole history each time is matched to
// the session we answered (src/agent-wire/threads.ts). The session's object keeps its head in its own storage, and
// writes it to D1 (agent_threads, for finding the session by history from any isolate) in the same batch as its
// list entry, before the answer ends (issue 46: one D1 write a turn). A request that continues a session by its
// history is checked against the object's own head, so it reads D1 only when no isolate knows the session.
import { z } from "zod";
import type { Db } from "../db";
import { sha256Hex } from "../secret-text";
import type { OpenAIToolCall } from "../wire/openai";

/** A message of a client's history reduced to what it means: what its fingerprint covers, what a new session is seeded with. */
export type Meaning =
  | { role: "system" | "user"; text: string }
  | { role: "assistant"; text: string; calls: { id: string; name: string; arguments: string }[] }
  | { role: "tool"; toolCallId: string; text: string };

/**
 * Tool call arguments as one spelling of their JSON (clients re-serialise what the model wrote: `{"a": 1}`
 * comes back as `{"a":1}`); text that is not JSON stays as it is.
 */
export function canonicalArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** The fingerprint of a transcript so far, one message further. */
export function nextFingerprint(previous: string, meaning: Meaning): Promise<string> {
  return sha256Hex(`${previous}\n${JSON.stringify(meaning)}`);
}

export const EMPTY_FINGERPRINT = "aptix-agent-v1";

/** The fingerprint after each message: `chain[i]` covers messages 0..i. */
export async function fingerprintChain(meanings: readonly Meaning[]): Promise<string[]> {
  const chain: string[] = [];
  let previous = EMPTY_FINGERPRINT;
  for (const meaning of meanings) {
    previous = await nextFingerprint(previous, meaning);
    chain.push(previous);
  }
  return chain;
}

/** Where a door's request leaves the conversation: its key, and the fingerprint of its history (new input included). */
export interface ThreadPlace {
  keyId: string;
  after: string;
}

/** The head after our answer: the history with the answer appended, as the client will send it back. */
export function headAfter(place: ThreadPlace, content: string, calls: readonly OpenAIToolCall[]): Promise<string> {
  return nextFingerprint(place.after, {
    role: "assistant",
    text: content,
    calls: calls.map((t) => ({ id: t.id, name: t.function.name, arguments: canonicalArguments(t.function.arguments) })),
  });
}

/** The statement that makes `head` the session's head (of its key's conversations). */
export function headStatement(db: Db, sessionId: string, keyId: string, head: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO agent_threads (session_id, key_id, head) VALUES (?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET key_id = excluded.key_id, head = excluded.head,
         updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    )
    .bind(sessionId, keyId, head);
}

// agent_threads' rows, parsed once (snake_case to camelCase).
const HeadRow = z.object({ head: z.string() });
const SessionOfHeadRow = z.object({ session_id: z.string() }).transform((r) => ({ sessionId: r.session_id }));

/** The session's head of its key's conversation, if it has one. */
export async function headOfSession(db: Db, sessionId: string, keyId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT head FROM agent_threads WHERE session_id = ? AND key_id = ?")
    .bind(sessionId, keyId)
    .first();
  return row ? HeadRow.parse(row).head : null;
}

/** The latest session of the key whose head is `head`, if any. */
export async function sessionOfHead(db: Db, keyId: string, head: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT session_id FROM agent_threads WHERE key_id = ? AND head = ? ORDER BY updated_at DESC LIMIT 1")
    .bind(keyId, head)
    .first();
  return row ? SessionOfHeadRow.parse(row).sessionId : null;
}

/** A session's own record of its head (its storage's `thread_head`), and the check of a request's history against it. */
export class SessionHead {
  constructor(
    private readonly sql: SqlStorage,
    private readonly db: Db,
    private readonly sessionId: string,
  ) {}

  keep(keyId: string, head: string): void {
    this.sql.exec(
      `INSERT INTO thread_head (id, key_id, head) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, head = excluded.head`,
      keyId,
      head,
    );
  }

  /**
   * Whether `head` is the session's head of `keyId`'s conversation: its own record, or, for a session whose last
   * answer came before it kept one, or one deleted (its storage gone, while D1 keeps its head), D1's.
   */
  async is(keyId: string, head: string, deleted: boolean): Promise<boolean> {
    const row = deleted
      ? undefined
      : this.sql.exec<{ key_id: string; head: string }>("SELECT key_id, head FROM thread_head").toArray()[0];
    if (row) return row.key_id === keyId && row.head === head;
    return (await headOfSession(this.db, this.sessionId, keyId)) === head;
  }
}

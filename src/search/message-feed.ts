// Feeds the search index (D1 `message_index`, migration 0032) from inside a session's object: the messages written
// since the last feed, as one statement that rides in the same D1 batch as the session's list entry
// (src/session/list-writer.ts), so a turn costs no D1 round trip more. How far the index has the conversation is
// kept in the object's storage (`search_feed`, session schema version 10), so an evicted object carries on where it
// was, and a session written before search existed is indexed from its first message at its next change.
import type { Db } from "../db";
import type { SessionStore } from "../session/session-store";
import type { ConversationMessage } from "../wire/turn";
import { ownerColumn } from "./owner-token";

/** Characters of a message the index keeps (its first 8 KB or so: a search finds what a message is about early). */
export const MESSAGE_INDEX_CHARS = 8192;

/** Messages one feed reads at most (a longer backlog, such as an old session's, takes several writes). */
export const FEED_BATCH_MESSAGES = 50;

/**
 * What is indexed: the person's own words (and a workflow's, which speaks as them) and the agent's answers, as the
 * person saw them. Tool results are not: they are what tools read (files, pages), often long, and the answer that
 * used them says what mattered; JSON-format tool calls and the loop's corrections are not conversation either.
 */
function indexedRole(message: ConversationMessage): "user" | "assistant" | null {
  if (message.role === "user" && (message.kind === "message" || message.kind === "workflow")) return "user";
  if (message.role === "assistant" && (message.kind === "answer" || message.kind === "stopped")) return "assistant";
  return null;
}

/**
 * A message's text as indexed: control characters out (the snippet marks its matches with two of them, and no
 * message may forge a mark), its first MESSAGE_INDEX_CHARS characters (not half of a surrogate pair).
 */
export function indexedText(content: string): string {
  const clean = content.replace(/[^\P{Cc}\t\n\r]/gu, " ");
  if (clean.length <= MESSAGE_INDEX_CHARS) return clean.trim();
  return clean
    .slice(0, MESSAGE_INDEX_CHARS)
    .replace(/[\uD800-\uDBFF]$/, "")
    .trim();
}

/** One feed: the statement to run in the list entry's batch, how far it takes the index, and whether more wait. */
export interface FeedWrite {
  statement: D1PreparedStatement;
  through: number;
  more: boolean;
}

type Row = Record<string, SqlStorageValue>;

export class MessageFeed {
  /** How far the index has the conversation (the seq of the newest message fed), once read from storage. */
  private through: number | null = null;
  private owner: Promise<string> | null = null;

  constructor(private readonly deps: { store: SessionStore; sql: SqlStorage }) {}

  private indexedThrough(): number {
    if (this.through === null) {
      const row = this.deps.sql.exec<Row>("SELECT indexed_seq FROM search_feed WHERE id = 1").toArray()[0];
      this.through = typeof row?.indexed_seq === "number" ? row.indexed_seq : 0;
    }
    return this.through;
  }

  /**
   * The messages written since the last feed as one insert, or null when there are none. Inserted only while the
   * session is in the list (a write that lands after the session's deletion adds nothing back); a message indexed
   * already is left as it is.
   */
  async next(db: Db): Promise<FeedWrite | null> {
    const record = this.deps.store.record();
    if (!record) return null;
    const after = this.indexedThrough();
    const read = this.deps.store.messagesBetween(after, Number.MAX_SAFE_INTEGER, FEED_BATCH_MESSAGES);
    const last = read.at(-1);
    if (!last) return null;
    const rows = read.flatMap((message) => {
      const role = indexedRole(message);
      const text = role && message.content ? indexedText(message.content) : "";
      return role && text ? [{ seq: message.seq, role, createdAt: message.createdAt, text }] : [];
    });
    this.owner ??= ownerColumn(record.org, record.user);
    const statement = db
      .prepare(
        `INSERT OR IGNORE INTO message_index (org_id, user_id, session_id, seq, role, created_at, text, owner)
         SELECT ?1, ?2, ?3, json_extract(value, '$.seq'), json_extract(value, '$.role'),
           json_extract(value, '$.createdAt'), json_extract(value, '$.text'), ?4
         FROM json_each(?5) WHERE EXISTS (SELECT 1 FROM session_index WHERE session_id = ?3)`,
      )
      .bind(record.org, record.user, record.sessionId, await this.owner, JSON.stringify(rows));
    return { statement, through: last.seq, more: read.length === FEED_BATCH_MESSAGES };
  }

  /** The batch with `write` succeeded: the index has the conversation through `write.through`. */
  done(write: FeedWrite): void {
    this.through = Math.max(this.indexedThrough(), write.through);
    this.deps.sql.exec(
      "INSERT INTO search_feed (id, indexed_seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET indexed_seq = excluded.indexed_seq",
      this.through,
    );
  }
}

// The session's entry in its owner's list (D1 `session_index`, src/session/session-index.ts): rewritten after a
// change of status, mode or title, off the reply path, several changes in one write. The same batch feeds the search
// index the messages written since (src/session/message-feed.ts), so a turn's end is one D1 write; and, when memory is
// on, reads the owner's memories for the session's copy of them (src/session/memory-copy.ts).
import type { Db } from "../db";
import type { AdminLogger } from "../observability/admin-logger";
import type { LoggedFrame } from "../wire/frames";
import type { EventLog } from "./event-log";
import type { CopyRead } from "./memory-copy";
import type { MessageFeed } from "./message-feed";
import { sessionTitle, updateSessionIndex } from "./session-index";
import type { SessionStore } from "./session-store";

/** Frames after which the entry is rewritten (besides any change of status or mode). */
const LISTED_CHANGES: ReadonlySet<string> = new Set([
  "turn_started",
  "elicitation_required",
  "elicitation_answered",
  "mode_changed",
  "turn_completed",
]);

/** How long the entry's write waits for further changes to carry. */
const LIST_WRITE_DELAY_MS = 100;

export interface ListWriterDeps {
  store: SessionStore;
  events: EventLog;
  db: Db;
  logger: AdminLogger;
  /** The search index's feed, written in the entry's batch. */
  feed: MessageFeed;
  /** A question of an MCP server waits for the user's answer. */
  questionWaiting: () => boolean;
  /** The read of the owner's memories for the session's copy made at `at` (ISO), when memory is on for it (else null). */
  memoryRead?: (at: string) => Promise<CopyRead | null>;
  /** Keeps the object alive until the write is done. */
  waitUntil: (work: Promise<unknown>) => void;
}

export class SessionListWriter {
  /** The session's title in the list, once it has a first message. */
  private title: string | null = null;
  /** The status and mode the list was last told. */
  private listed = "";
  /** A write of the entry is scheduled. */
  private pending = false;
  /** The write scheduled or under way, if any (what settled() waits for). */
  private current: Promise<void> | null = null;

  constructor(private readonly deps: ListWriterDeps) {}

  /** A frame was emitted: the entry is rewritten when the frame (or the session's status or mode) calls for it. */
  noteFrame(frame: LoggedFrame): void {
    const record = this.deps.store.record();
    const listed = record ? `${record.status} ${record.mode}` : "";
    if (LISTED_CHANGES.has(frame.type) || listed !== this.listed) this.schedule();
    this.listed = listed;
  }

  /**
   * One write for the changes of LIST_WRITE_DELAY_MS (a quick turn's start and end are one write), so the write of
   * a turn's start does not stand in the way of its first model call.
   */
  private schedule(): void {
    if (this.pending) return;
    this.pending = true;
    const write: Promise<void> = new Promise((resolve) => setTimeout(resolve, LIST_WRITE_DELAY_MS))
      .then(() => {
        this.pending = false;
        return this.write();
      })
      .finally(() => {
        if (this.current === write) this.current = null;
      });
    this.current = write;
    this.deps.waitUntil(write);
  }

  /** Resolves when no write of the entry is scheduled or under way (tests run inside the object wait on it). */
  async settled(): Promise<void> {
    while (this.current) await this.current.catch(() => {});
  }

  /**
   * The entry as it is now; a write that lands after a newer one changes nothing (its seq is lower). The messages
   * since the last write go to the search index in the same batch; a backlog longer than one feed writes again.
   */
  private async write(): Promise<void> {
    const { store, events, db, logger, feed } = this.deps;
    const record = store.record();
    if (!record) return;
    const waitingForUser = record.status !== "idle" && record.status !== "running";
    this.title ??= firstMessageTitle(store);
    const entry = {
      sessionId: record.sessionId,
      mode: record.mode,
      status: record.status,
      waitingForUser: waitingForUser || this.deps.questionWaiting(),
      title: this.title,
      updatedAt: new Date().toISOString(),
      seq: events.lastSeq(),
    };
    const fed = await feed.next(db).catch((error: unknown) => {
      logger.addException("[message_index]", error, [["SessionId", record.sessionId]]);
      return null;
    });
    const memory = await (this.deps.memoryRead?.(entry.updatedAt) ?? Promise.resolve(null)).catch((error: unknown) => {
      logger.addException("[memory_copy]", error, [["SessionId", record.sessionId]]);
      return null;
    });
    const alongside = [...(memory?.statements ?? []), ...(fed ? [fed.statement] : [])];
    const written = await updateSessionIndex(
      db,
      { ...entry, memoryCopyAt: memory ? entry.updatedAt : null },
      logger,
      alongside,
    );
    if (written && memory) {
      // The copy is as new as the entry's memory_copy_at, stamped by this batch's own write of the entry (never moving
      // it back), so a change made after the read finds this session by that stamp (src/session/memory-notify.ts).
      memory.keep(written.alongside.slice(0, memory.statements.length), written.entryWritten);
    }
    if (!written) {
      // The entry alone, when the feed rode with it: should the entry be written without it, the feed was what
      // failed (messages D1 refuses), and they are passed over rather than holding back every later write.
      if (!fed || !(await updateSessionIndex(db, entry, logger))) return;
    }
    if (!fed || store.record() === null) return;
    feed.done(fed);
    if (fed.more) this.schedule();
  }
}

/**
 * The list's title for a session: from its first message from the user (the names of its files when it has no
 * text); null before there is one, and when nothing of it is fit for a title (only control characters).
 */
export function firstMessageTitle(store: SessionStore): string | null {
  const first = store.firstUserMessage();
  const text = first?.content || (first?.attachments ?? []).map((file) => file.name).join(", ");
  return (text && sessionTitle(text)) || null;
}

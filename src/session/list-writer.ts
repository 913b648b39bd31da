// The session's entry in its owner's list (D1 `session_index`, src/session/session-index.ts): rewritten after a
// change of status, mode or title, off the reply path, several changes in one write. The same batch feeds the search
// index the messages written since (src/session/message-feed.ts) and the usage rows the session's model calls left in
// its usage outbox (src/session/usage-outbox.ts), so a turn's end is one D1 write; and, when memory is on and the
// session's copy of the owner's memories is due a refresh, reads them for it (src/session/memory-copy.ts). It also
// asks whether any webhook endpoint hears a turn's stop event kept in the event outbox (src/session/event-outbox.ts),
// which is queued only when one does. After an answer of the agent's OpenAI door, it carries the conversation's
// head too (src/session/thread-head.ts), written at once: the door's answer waits for it.
import type { Db } from "../db";
import { type UsageRecord, usageInserts } from "../metering/usage-records";
import type { AdminLogger } from "../observability/admin-logger";
import { WebhookEndpoints } from "../webhooks/endpoint-store";
import type { EventMessage } from "../webhooks/events";
import type { LoggedFrame } from "../wire/frames";
import type { EventLog } from "./event-log";
import type { EventOutbox } from "./event-outbox";
import type { CopyRead } from "./memory-copy";
import type { MessageFeed } from "./message-feed";
import { sessionTitle, updateSessionIndex } from "./session-index";
import type { SessionStore } from "./session-store";
import { USAGE_ROWS_PER_WRITE, type UsageOutbox } from "./usage-outbox";

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
/**
 * How long the write of a turn's start waits: a turn that ends sooner (most do) is one write, its start and its end
 * together (issue 46: one D1 batch a turn), and a longer turn shows as running in the list by then.
 */
const LIST_WRITE_RUNNING_DELAY_MS = 500;
/**
 * How long the write waits when a turn's stop event awaits its check: a moment (20 ms), not the 100 ms of
 * LIST_WRITE_DELAY_MS, since the event reaches the queue only after this write, so its wait is every webhook's. Not
 * 0 either: the turn's answer leaves the object, and the Worker writes it to the client, before the write's work
 * starts on the same thread (under `wrangler dev` one thread runs the Worker and every object; bench:peers measured
 * the answer 2 to 3 ms later with 0).
 */
const LIST_WRITE_CHECK_DELAY_MS = 20;

export interface ListWriterDeps {
  store: SessionStore;
  events: EventLog;
  db: Db;
  logger: AdminLogger;
  /** The search index's feed, written in the entry's batch. */
  feed: MessageFeed;
  /** The usage rows kept until D1 has them, written in the entry's batch. */
  usage: UsageOutbox;
  /** The turn events kept awaiting the check (in the entry's batch) of whether any endpoint hears them. */
  outbox: EventOutbox;
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
  /** When the scheduled write starts, and what starts it sooner. */
  private due = 0;
  private hurry: () => void = () => {};
  /** The write scheduled or under way, if any (what settled() waits for). */
  private current: Promise<void> | null = null;
  /** The conversation's head waiting for the next write, and what to tell once that write is done. */
  private head: { statement: D1PreparedStatement; done: (written: boolean) => void } | null = null;
  /**
   * How long a write waits for further changes: after a turn's start (`running`), after any other change (`changed`);
   * while a turn's stop event awaits its check (`checking`), no longer than that. A test holds writes back longer, to
   * stop the object before one.
   */
  readonly delays = {
    running: LIST_WRITE_RUNNING_DELAY_MS,
    changed: LIST_WRITE_DELAY_MS,
    checking: LIST_WRITE_CHECK_DELAY_MS,
  };

  constructor(private readonly deps: ListWriterDeps) {}

  /** A frame was emitted: the entry is rewritten when the frame (or the session's status or mode) calls for it. */
  noteFrame(frame: LoggedFrame): void {
    const record = this.deps.store.record();
    const listed = record ? `${record.status} ${record.mode}` : "";
    if (LISTED_CHANGES.has(frame.type) || listed !== this.listed) {
      this.schedule(record?.status === "running" ? this.delays.running : this.delays.changed);
    }
    this.listed = listed;
  }

  /**
   * A turn's stop event was kept awaiting its check (src/session/turn-stops.ts): a write comes soon, a write scheduled
   * is hurried, and a write under way (which may have passed the point where it takes the events to check) is
   * followed by another.
   */
  eventKept(): void {
    this.schedule(this.delays.checking);
  }

  /**
   * A model call's usage row: kept in the usage outbox at once, and carried by a write. While a turn runs, the write
   * of its end carries it (one write a turn, however many calls); between turns (a compaction's call), a write of its
   * own. A row the storage refuses is logged with what it counted, and the turn goes on.
   */
  keepUsage(record: UsageRecord): void {
    try {
      this.deps.usage.keep(record);
    } catch (error) {
      this.deps.logger.addException("[AgentSession_Usage]", error, [
        ["TurnId", record.turnId ?? ""],
        ["TotalTokens", String(record.totalTokens)],
      ]);
      return;
    }
    if (this.deps.store.record()?.status !== "running") this.schedule();
  }

  /**
   * Writes the conversation's head (agent_threads) with the entry and what waits for it, at once: one D1 write for a
   * door's turn, before its answer goes out. Resolves once the write is done, with whether D1 took the head; a write
   * that fails is logged, never thrown (the session keeps its head: src/session/thread-head.ts).
   */
  writeHead(statement: D1PreparedStatement): Promise<boolean> {
    const written = new Promise<boolean>((resolve) => {
      this.head?.done(false);
      this.head = { statement, done: resolve };
    });
    this.schedule(0);
    return written;
  }

  /**
   * Writes what waits (the rows a stopped object left, from the alarm) at once, after any write under way; resolves
   * when no write is left.
   */
  async flush(): Promise<void> {
    await this.settled();
    this.schedule(0);
    await this.settled();
  }

  /**
   * One write for the changes of a short while (a quick turn's start and end are one write), so the write of a turn's
   * start does not stand in the way of its first model call. A write scheduled already starts no later than `delayMs`
   * from now (a turn's end does not wait for its start's longer delay).
   */
  private schedule(requestedMs = this.delays.changed): void {
    const delayMs = this.deps.outbox.awaitingCheck() ? Math.min(requestedMs, this.delays.checking) : requestedMs;
    const at = Date.now() + delayMs;
    if (this.pending) {
      if (at < this.due) {
        this.due = at;
        setTimeout(this.hurry, delayMs);
      }
      return;
    }
    this.pending = true;
    this.due = at;
    const write: Promise<void> = new Promise<void>((resolve) => {
      this.hurry = resolve;
      setTimeout(resolve, delayMs);
    })
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
   * since the last write go to the search index in the same batch, and the usage rows kept since, so a turn's end is
   * one D1 write (issue 46: the rows ride a batch that is written anyway, rather than a queue whose consumer would
   * write them in bulk: no new binding, no queue message per turn, and the session's own storage keeps them safe
   * until the batch lands). A backlog longer than one batch writes again. The turn events awaiting their check ride
   * the batch too, one statement each (whether any endpoint hears it); each is then sent or forgotten by the answer,
   * and sent whenever there is none (the batch failed, or the session was deleted and no batch was made), so none is
   * lost.
   */
  private async write(): Promise<void> {
    const checks: Checks = { events: [], heard: null };
    const head = this.head;
    this.head = null;
    let headWritten = false;
    try {
      headWritten = await this.writeEntry(checks, head ? [head.statement] : []);
    } finally {
      head?.done(headWritten);
      await this.deps.outbox.checked(checks.events, checks.heard);
    }
  }

  /**
   * `head`: the conversation's head statement, when one waits (written with the entry, through every fallback).
   * Answers whether a batch with `head` was written.
   */
  private async writeEntry(checks: Checks, head: D1PreparedStatement[]): Promise<boolean> {
    const { store, events, db, logger, feed, usage, outbox } = this.deps;
    const record = store.record();
    if (!record) {
      checks.events = outbox.take();
      return false;
    }
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
    const rows = usage.kept();
    const inserts = usageInserts(db, rows);
    // Taken last, just before the batch: an event kept while this write awaited rides it rather than the next.
    checks.events = outbox.take();
    const listened = checks.events.map((message) => listenedStatement(db, message));
    const alongside = [
      ...(memory?.statements ?? []),
      ...head,
      ...(fed ? [fed.statement] : []),
      ...inserts,
      ...listened,
    ];
    const written = await updateSessionIndex(
      db,
      { ...entry, memoryCopyAt: memory ? entry.updatedAt : null },
      logger,
      alongside,
    );
    // A session deleted meanwhile has no storage left to forget an event in: each is sent, the consumer deciding.
    if (written && store.record() !== null) {
      checks.heard = written.alongside.slice(alongside.length - listened.length).map(heard);
    }
    if (written && memory) {
      // The copy is as new as the entry's memory_copy_at, stamped by this batch's own write of the entry (never moving
      // it back), so a change made after the read finds this session by that stamp (src/session/memory-notify.ts).
      memory.keep(written.alongside.slice(0, memory.statements.length), written.entryWritten);
    }
    if (!written) {
      // The entry and the usage rows alone, when the feed or the memories' read rode with them: should they be written
      // without it, that was what failed (messages D1 refuses), and they are passed over rather than holding back every
      // later write. Else the rows stay kept, and the alarm tries again (the entry going alone meanwhile: rows D1 would
      // refuse must not hold the list back either). The events checked are sent unchecked (write()).
      if ((!fed && !memory) || !(await updateSessionIndex(db, entry, logger, [...head, ...inserts]))) {
        if (store.record() === null) return false;
        usage.failed();
        if (inserts.length === 0) return false;
        return (await updateSessionIndex(db, entry, logger, head)) !== null;
      }
    }
    // A session deleted meanwhile wrote its kept rows itself (src/session/session-keeper.ts); its storage is gone.
    if (store.record() === null) return true;
    usage.written(rows);
    if (rows.length === USAGE_ROWS_PER_WRITE) this.schedule();
    if (!fed) return true;
    feed.done(fed);
    if (fed.more) this.schedule();
    return true;
  }
}

/** The events a write took to check, and, once its batch answered, whether each is heard (null: no answer). */
interface Checks {
  events: EventMessage[];
  heard: boolean[] | null;
}

/** The statement asking whether any endpoint hears `message` (an A2A push config hears of its own task's turn). */
function listenedStatement(db: Db, message: EventMessage): D1PreparedStatement {
  const { org, user, type, data } = message.event;
  const taskId = typeof data.turnId === "string" ? data.turnId : null;
  return new WebhookEndpoints(db).listenedStatement(org, user, type, message.at, taskId);
}

/** A check's answer: heard unless it says `heard: 0` (an answer that does not read as one sends the event). */
function heard(result: D1Result): boolean {
  const row: unknown = result.results?.[0];
  return !(typeof row === "object" && row !== null && "heard" in row && row.heard === 0);
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

// The session's turn events, kept in its storage until the webhook queue has them, so each is sent at least once.
// A stop's event is kept in the same synchronous step as the stop is stored (both are written, or neither), and
// awaits its check: the session's next list write asks D1, in the batch it makes anyway, whether any endpoint hears
// it (src/session/list-writer.ts). Heard, it is sent to the queue and deleted once the queue took it; heard by none
// (the usual case), it is deleted unsent, which spares a queue message and the consumer's reads of D1 (issue 46); a
// check that got no answer sends it, the consumer deciding. Should the object stop before, or the queue refuse it,
// the row stays: the object's alarm sends it again, unchecked, the same message with the same event id, and the
// queue's consumer delivers an event once per endpoint however often it comes (src/webhooks/consumer.ts).

import { z } from "zod";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { type EventMessage, WEBHOOK_EVENT_TYPES } from "../webhooks/events";
import { QueuedEvent } from "../webhooks/queue-message";

/** How long after a failed send (the first, the second, ...; the last repeats) the alarm tries again. */
export const OUTBOX_RETRY_MS = [30_000, 300_000, 1_800_000] as const;

type Row = Record<string, SqlStorageValue>;

/** A kept row's message: a queued event of a type the Worker publishes (never a test event, never for one endpoint). */
const KeptEvent = QueuedEvent.omit({ only: true }).extend({
  event: QueuedEvent.shape.event.extend({ type: z.enum(WEBHOOK_EVENT_TYPES) }),
});

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

export interface EventOutboxDeps {
  sql: SqlStorage;
  logger: JsonAdminLogger;
  /** Asks for the alarm again: a failed send wants it at dueAt(). */
  rearm: () => void;
  /**
   * The session was deleted (its storage, the kept rows with it, is gone): an event is still sent, but nothing is
   * written to the storage, nor the alarm set, for it (a deletion stops the turn, whose event its check may send).
   */
  gone?: () => boolean;
  now?: () => number;
}

export class EventOutbox {
  /** Where a kept event goes: the webhook queue in the object; a test may put a recorder, or a failing send, here. */
  send: (message: EventMessage) => Promise<void>;
  /** The ids being sent by this instance (the alarm leaves them to the send under way). */
  private readonly sending = new Set<string>();
  /** The events kept by this instance that await their check, not yet taken by a list write (oldest first). */
  private readonly unchecked = new Map<string, EventMessage>();
  /** The ids awaiting their check or its answer (the alarm leaves them to the list write). */
  private readonly checking = new Set<string>();
  private failures = 0;
  /** When the alarm should send what is kept: at once for rows an earlier instance left; after a failure, later. */
  private due: number | null;

  constructor(
    private readonly deps: EventOutboxDeps,
    send: (message: EventMessage) => Promise<void>,
  ) {
    this.send = send;
    this.due = this.count() > 0 ? this.now() : null;
  }

  /** Keeps the event in the object's storage. */
  private keep(message: EventMessage): void {
    this.deps.sql.exec(
      "INSERT OR IGNORE INTO event_outbox (id, message_json, kept_at) VALUES (?, ?, ?)",
      message.id,
      JSON.stringify(message),
      this.now(),
    );
  }

  /**
   * Keeps the event (keep()) to be sent only once a list write finds that someone hears it (take(), then checked());
   * called in the synchronous step that stores the turn's stop, before anything awaits.
   */
  keepForCheck(message: EventMessage): void {
    this.keep(message);
    this.unchecked.set(message.id, message);
    this.checking.add(message.id);
  }

  /** Whether an event kept for its check is not yet taken by a list write. */
  awaitingCheck(): boolean {
    return this.unchecked.size > 0;
  }

  /** The events awaiting their check, taken by the list write that asks about them (no other write takes them). */
  take(): EventMessage[] {
    const taken = [...this.unchecked.values()];
    this.unchecked.clear();
    return taken;
  }

  /**
   * The answers of a list write about the events it took, in order: a heard event is sent (deliver()), one heard by
   * none is deleted unsent. Without answers (`null`: the batch failed, or was not made) every one is sent, as it was
   * before the check, and the consumer decides. Never throws.
   */
  async checked(messages: readonly EventMessage[], heard: readonly boolean[] | null): Promise<void> {
    const sends: Promise<void>[] = [];
    messages.forEach((message, index) => {
      this.checking.delete(message.id);
      if (heard === null || heard[index] !== false) {
        sends.push(this.deliver(message));
        return;
      }
      if (this.gone()) return;
      try {
        this.deps.sql.exec("DELETE FROM event_outbox WHERE id = ?", message.id);
        if (this.count() <= this.checking.size) this.due = null;
      } catch (error) {
        this.deps.logger.addException("[AgentSession_EventOutbox__Exception]", error, [["EventId", message.id]]);
      }
    });
    await Promise.all(sends);
  }

  /** Sends a kept event and deletes its row once the queue took it; a failure keeps the row for the alarm. Never throws. */
  async deliver(message: EventMessage): Promise<void> {
    if (this.sending.has(message.id)) return;
    this.sending.add(message.id);
    try {
      await this.send(message);
      if (this.gone()) return;
      this.deps.sql.exec("DELETE FROM event_outbox WHERE id = ?", message.id);
      this.failures = 0;
      // Rows awaiting their check are the list write's: the alarm is not wanted for them.
      if (this.count() <= this.checking.size) this.due = null;
    } catch (error) {
      this.deps.logger.addException("[AgentSession_EventOutbox__Exception]", error, [
        ["EventId", message.id],
        ["Event", message.event.type],
      ]);
      if (this.gone()) return;
      const wait = OUTBOX_RETRY_MS[Math.min(this.failures, OUTBOX_RETRY_MS.length - 1)] ?? 0;
      this.failures += 1;
      this.due = this.now() + wait;
      this.deps.rearm();
    } finally {
      this.sending.delete(message.id);
    }
  }

  /**
   * Sends every kept event not already being sent nor awaiting its check (the alarm's part: rows an earlier instance
   * left, or a failed send kept), unchecked, oldest first. Never throws.
   */
  async flush(): Promise<void> {
    let kept: EventMessage[];
    try {
      kept = this.kept().filter((message) => !this.checking.has(message.id));
    } catch (error) {
      this.deps.logger.addException("[AgentSession_EventOutbox__Exception]", error);
      return;
    }
    await Promise.all(kept.map((message) => this.deliver(message)));
  }

  /** When the alarm should wake the object to send what is kept, or null when nothing waits for it. */
  dueAt(): number | null {
    return this.due;
  }

  /**
   * The kept events' messages, oldest first. A row that does not read as a message (none this code writes) is logged
   * and dropped: the queue's consumer could not read it either, and it would be tried on every alarm.
   */
  kept(): EventMessage[] {
    const rows = this.deps.sql.exec<Row>("SELECT id, message_json FROM event_outbox ORDER BY kept_at, id").toArray();
    const kept: EventMessage[] = [];
    for (const row of rows) {
      const parsed = KeptEvent.safeParse(parseJson(String(row.message_json)));
      if (parsed.success) {
        kept.push(parsed.data);
        continue;
      }
      this.deps.logger.addError("[AgentSession_EventOutbox]", "A kept event that reads as no event was dropped.", [
        ["EventId", String(row.id)],
      ]);
      this.deps.sql.exec("DELETE FROM event_outbox WHERE id = ?", row.id);
    }
    return kept;
  }

  private gone(): boolean {
    return this.deps.gone?.() ?? false;
  }

  private count(): number {
    const row = this.deps.sql.exec<Row>("SELECT COUNT(*) AS kept FROM event_outbox").one();
    return Number(row.kept);
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

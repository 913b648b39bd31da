// Every turn that stops, whichever door started it, is told to the org's subscribers at least once: `turn.completed`,
// `turn.failed` (a cancelled turn too, with status `cancelled`) or `turn.paused` (an approval or a client's results
// are awaited). The loop's own events are the one place a turn ends or pauses (turn-ending.ts), so the session's
// TurnEvents are wrapped here: after the loop's handler, in the same synchronous step as the stop was stored, the
// event is built (from the object's own storage; no D1) and kept in the session's event outbox, and the session's
// list write is asked for at once: its D1 batch (made after every turn anyway) checks whether any endpoint hears the
// event, which is queued only if one does (event-outbox.ts, list-writer.ts). Nothing on the turn's path waits for it.
import type { TurnEvents } from "../agent/turn-events";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { secretRedactor } from "../secret-redaction";
import { eventMessage, type WebhookEvent } from "../webhooks/events";
import type { AgentExecuteResponse } from "../wire/turn";
import type { EventOutbox } from "./event-outbox";
import type { SessionStore } from "./session-store";

/** The summary's length at most: a first part of the answer or the error, enough for a notification. */
export const SUMMARY_CHARS = 200;

export interface TurnStopsDeps {
  store: SessionStore;
  env: object;
  /** The id of the turn the loop's events are about (the driver's). */
  turnId: () => string;
  logger: JsonAdminLogger;
  /**
   * Keeps each event until the queue has it, or its check finds that no one hears it (its `send` is the seam tests
   * record or fail).
   */
  outbox: EventOutbox;
  /** An event awaits its check: asks for the list write that checks it, soon (list-writer.ts eventKept). */
  kept: () => void;
}

export class TurnStops {
  constructor(private readonly deps: TurnStopsDeps) {}

  /** The loop's events, each stop's event also kept for its check (after the loop's own handler). */
  wrap(events: TurnEvents): TurnEvents {
    return {
      ...events,
      approvalRequired: (calls) => {
        events.approvalRequired?.(calls);
        this.paused("approval");
      },
      clientToolRequired: (calls) => {
        events.clientToolRequired?.(calls);
        this.paused("client");
      },
      turnCompleted: (response) => {
        // The id first: the loop's handler may be told of the next turn by the time this one's event is built.
        const turnId = this.deps.turnId();
        events.turnCompleted?.(response);
        this.ended(turnId, response);
      },
    };
  }

  private paused(waitingFor: "approval" | "client"): void {
    const turn = this.deps.store.turn();
    if (!turn) return;
    const { mode } = this.deps.store.identity();
    const data = { status: "paused", mode, steps: turn.iterations, waitingFor, text: turn.text ?? "" };
    this.later("turn.paused", turn.turnId, data);
  }

  private ended(turnId: string, response: AgentExecuteResponse): void {
    if (response.status.startsWith("awaiting_")) return;
    const type = response.status === "completed" ? "turn.completed" : "turn.failed";
    const text = response.status === "completed" ? response.text : (response.error?.message ?? "");
    const data = { status: response.status, mode: response.mode, steps: response.iterations, text };
    this.later(type, turnId, data, response.error?.code);
  }

  /**
   * Builds the event (its summary redacted of every secret the Worker knows) and keeps it, synchronously, in the step
   * that stored the stop; the list write that follows checks it, and sends it if anyone hears it. A failure to build
   * is logged and never breaks the turn.
   */
  private later(
    type: WebhookEvent["type"],
    turnId: string,
    fields: { status: string; mode: string; steps: number; text: string; waitingFor?: string },
    errorCode?: string,
  ): void {
    try {
      const { org, user, sessionId } = this.deps.store.identity();
      const { text, ...rest } = fields;
      const summary = secretRedactor(this.deps.env)(text).slice(0, SUMMARY_CHARS);
      const data = { sessionId, turnId, ...rest, ...(errorCode ? { errorCode } : {}), summary };
      const message = eventMessage({ type, org, user, sessionId, data });
      this.deps.outbox.keepForCheck(message);
      this.deps.kept();
    } catch (error) {
      this.deps.logger.addException("[AgentSession_TurnEvent__Exception]", error, [["TurnId", turnId]]);
    }
  }
}

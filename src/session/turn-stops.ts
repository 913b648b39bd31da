// Every turn that stops, whichever door started it, is told to the org's subscribers once: `turn.completed`,
// `turn.failed` (a cancelled turn too, with status `cancelled`) or `turn.paused` (an approval or a client's results
// are awaited), through publishEvent (src/webhooks/events.ts). The loop's own events are the one place a turn ends
// or pauses (turn-ending.ts), so the session's TurnEvents are wrapped here, and the event is built and published
// after the loop's handler has run, in the object's waitUntil: nothing on the turn's path waits for it, and it reads
// nothing but the object's own storage.
import type { TurnEvents } from "../agent/turn-events";
import type { JsonAdminLogger } from "../observability/admin-logger";
import { secretRedactor } from "../secret-redaction";
import type { WebhookEvent } from "../webhooks/events";
import type { AgentExecuteResponse } from "../wire/turn";
import type { SessionStore } from "./session-store";

/** The summary's length at most: a first part of the answer or the error, enough for a notification. */
export const SUMMARY_CHARS = 200;

export interface TurnStopsDeps {
  store: SessionStore;
  env: object;
  /** The id of the turn the loop's events are about (the driver's). */
  turnId: () => string;
  waitUntil: (work: Promise<unknown>) => void;
  logger: JsonAdminLogger;
}

export class TurnStops {
  /** Where a stop's event goes: publishEvent in the object; a test may put a recorder here. */
  publish: (event: WebhookEvent) => void;

  constructor(
    private readonly deps: TurnStopsDeps,
    publish: (event: WebhookEvent) => void,
  ) {
    this.publish = publish;
  }

  /** The loop's events, each stop also published (after the loop's own handler). */
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

  /** Builds the event off the turn's path (the summary redacted of every secret the Worker knows) and publishes it. */
  private later(
    type: WebhookEvent["type"],
    turnId: string,
    fields: { status: string; mode: string; steps: number; text: string; waitingFor?: string },
    errorCode?: string,
  ): void {
    const { org, user, sessionId } = this.deps.store.identity();
    const { text, ...rest } = fields;
    this.deps.waitUntil(
      Promise.resolve()
        .then(() => {
          const summary = secretRedactor(this.deps.env)(text).slice(0, SUMMARY_CHARS);
          const data = { sessionId, turnId, ...rest, ...(errorCode ? { errorCode } : {}), summary };
          this.publish({ type, org, user, sessionId, data });
        })
        .catch((error: unknown) =>
          this.deps.logger.addException("[AgentSession_TurnEvent__Exception]", error, [["TurnId", turnId]]),
        ),
    );
  }
}

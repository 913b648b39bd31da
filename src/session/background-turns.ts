// Turns that run on in the session object after their request is answered (`Prefer: respond-async`, schedules,
// A2A tasks): the turn is admitted as every door's is (busy, budget, the key's limit, input that does not fit the
// session's state are refused and store nothing), its first state is stored, and the caller is answered with the
// turn's id while the turn goes on. It runs like every other turn: its frames reach the WebSocket and SSE, approvals
// pause it, and the session's alarm resumes it should the object stop mid-turn.
import type { JsonAdminLogger } from "../observability/admin-logger";
import type { Outcome } from "../refusal";
import type { MessageAttachment } from "../wire/attachments";
import type { ApprovalDecision, ClientToolResult } from "../wire/session";
import type { TurnAccepted } from "../wire/turn";
import { type Caller, callLogger } from "./caller";
import type { SessionStore } from "./session-store";
import { startedOrEnded, type TurnDriver } from "./turn-driver";

/** What a background turn is asked to do: a new message, or the decisions or client results a paused turn awaits. */
export type BackgroundAsk =
  | { kind: "message"; content: string; attachments?: readonly MessageAttachment[] }
  | { kind: "approvals"; decisions: ApprovalDecision[] }
  | { kind: "tool_results"; results: ClientToolResult[] };

export interface BackgroundTurnsDeps {
  store: SessionStore;
  driver: TurnDriver;
  logger: JsonAdminLogger;
  waitUntil: (work: Promise<unknown>) => void;
}

/**
 * Admits the ask and starts its turn, answering once the turn's first state is stored (`running`, with its id).
 * A new message is answered once it is stored (the turn has started: its input checks passed), so nothing the person
 * wrote is only in memory when they are told it was taken, and a message the guardrails block is refused here, as on
 * every other door. Otherwise everything a turn does before its first wait is synchronous (the reasoner marks the
 * paused turn running before its first await), so the store tells at once whether the turn started; when it did
 * not, the drive answers a refusal (a client result that breaks its tool's shape), which is returned as it is.
 */
export async function startBackgroundTurn(
  deps: BackgroundTurnsDeps,
  caller: Caller,
  ask: BackgroundAsk,
): Promise<Outcome<TurnAccepted>> {
  const { store, driver } = deps;
  const turnAsk = ask.kind === "message" ? { ...ask, attachments: ask.attachments ?? [] } : ask;
  const admitted = await driver.admit(turnAsk, { caller });
  if (!admitted.ok) return admitted;
  const wait = ask.kind === "message" ? driver.nextStart() : null;
  const running = driver.drive(admitted.value, { caller });
  if (wait && !(await startedOrEnded(wait, running))) {
    // A refusal is answered as it is. A turn that broke before its message was stored (a guardrail's classifier
    // threw) was ended as broken by the driver: answered with its id, as before, its status saying so.
    const outcome = await running.catch((error: unknown) => {
      callLogger(deps.logger, caller).addException("[AgentSession_BackgroundTurn__Exception]", error);
      return null;
    });
    if (outcome && !outcome.ok) return outcome;
    return { ok: true, value: { sessionId: store.identity().sessionId, turnId: driver.turnId(), status: "running" } };
  }
  const turn = store.turn();
  if (store.status() === "running" && turn) {
    // The turn goes on: a failure is logged (and the turn ended as broken) by the driver; nobody waits for it here.
    deps.waitUntil(
      running.catch((error: unknown) =>
        callLogger(deps.logger, caller).addException("[AgentSession_BackgroundTurn__Exception]", error, [
          ["TurnId", turn.turnId],
        ]),
      ),
    );
    return { ok: true, value: { sessionId: store.identity().sessionId, turnId: turn.turnId, status: "running" } };
  }
  const outcome = await running;
  if (!outcome.ok) return outcome;
  // Not reached by today's loop (it stores the turn before it waits); should a change make it so, the caller still
  // gets the turn's id, and its status answers how it went.
  return { ok: true, value: { sessionId: store.identity().sessionId, turnId: driver.turnId(), status: "running" } };
}

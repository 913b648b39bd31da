// What a session's state answers without running the loop: whether decisions or results fit the calls that wait
// (asked by the session's admission, src/session/turn-admission.ts), when a paused turn expires, and the ends that
// need no model (an expired pause, a cancelled pause, a turn an object restart or an unexpected failure left
// running). Plain functions over the store, so a request builds at most one AgentReasoner, and only to drive the loop.
import { type Outcome, type Refusal, refuse } from "../refusal";
import type { AgentExecuteResponse } from "../wire/turn";
import type { StoredToolCall } from "./agent-tool-call";
import { CANCELLED, finishTurn, limitError, type TurnEndingDeps } from "./turn-ending";
import { refusalForCalls, refusalUnless } from "./turn-gate";
import type { TurnStore } from "./turn-store";

/** Why these decisions cannot be taken now: nothing waits, a call that does not, an expired pause. */
export function refusalForApprovals(store: TurnStore, ids: string[]): Refusal | null {
  return refusalForPaused(store, ids, "awaiting_approval");
}

/** Why results for these calls cannot be taken now: nothing waits, a call that does not, an expired pause. */
export function refusalForToolResults(store: TurnStore, ids: string[]): Refusal | null {
  return refusalForPaused(store, ids, "awaiting_client");
}

function refusalForPaused(
  store: TurnStore,
  ids: string[],
  status: "awaiting_approval" | "awaiting_client",
): Refusal | null {
  const refused = refusalForExpired(store, ids) ?? refusalUnless(store.status(), status);
  if (refused) return refused;
  const turn = store.turn();
  return turn ? refusalForCalls(store.toolCalls(turn.turnId), ids, status satisfies StoredToolCall["state"]) : null;
}

/** Answers for calls of a turn whose pause expired say so, rather than that nothing is pending. */
function refusalForExpired(store: TurnStore, ids: string[]): Refusal | null {
  if (store.status() !== "idle") return null;
  const last = store.lastTurnOutcome();
  if (last?.error?.code !== "pause_expired") return null;
  const expired = new Set(store.toolCalls(last.turnId).map((c) => c.id));
  if (!ids.some((id) => expired.has(id))) return null;
  return refuse(
    "pause_expired",
    `The turn that asked for these tool calls expired at ${last.endedAt} and nothing more of it was executed; send a new message to continue.`,
  );
}

/** When a paused turn stops waiting (its pause expires), or null when the session has no paused turn. */
export function pauseExpiresAt(store: TurnStore, config: { pauseTtlMs: number }): number | null {
  const status = store.status();
  const turn = store.turn();
  if ((status !== "awaiting_approval" && status !== "awaiting_client") || !turn) return null;
  return turn.pauseExpiresAt ?? turn.startedAt + config.pauseTtlMs;
}

/**
 * Ends a paused turn whose pause has expired: its pending calls are settled unexecuted, the turn is recorded as
 * failed with `pause_expired`, and the session takes a new message. Null when nothing expired.
 */
export function expirePausedTurn(deps: TurnEndingDeps): AgentExecuteResponse | null {
  const expiresAt = pauseExpiresAt(deps.store, deps.config);
  const turn = deps.store.turn();
  if (expiresAt === null || !turn || expiresAt > deps.now()) return null;
  const waited = expiresAt - (turn.pausedAt ?? turn.startedAt);
  return finishTurn(deps, turn, "failed", "", { error: limitError(deps, turn, "pause_expired", waited) });
}

/** Ends a turn that waits on approvals or client results; a running turn is cancelled through its signal. */
export function cancelPausedTurn(deps: TurnEndingDeps): Outcome<AgentExecuteResponse> {
  const status = deps.store.status();
  const turn = deps.store.turn();
  if ((status !== "awaiting_approval" && status !== "awaiting_client") || !turn) {
    return refuse("nothing_to_cancel", "The session has no turn waiting to be cancelled.");
  }
  return { ok: true, value: finishTurn(deps, turn, "cancelled", "", { error: CANCELLED }) };
}

/**
 * A turn whose driver threw (an unexpected failure, logged by the caller with its stack) is ended as failed, so
 * the session takes messages again instead of staying `running`.
 */
export function failBrokenTurn(deps: TurnEndingDeps): void {
  const turn = deps.store.turn();
  if (deps.store.status() !== "running" || !turn) return;
  finishTurn(deps, turn, "failed", "", {
    error: { code: "internal_error", message: "The turn failed unexpectedly; send the message again." },
  });
}

/**
 * An object that restarted mid-turn finds its turn `running` with nobody driving it. It resumes (true), unless it
 * has resumed `maxResumes` times already: then it ends cleanly as `turn_interrupted` (false), as it does when
 * nothing is running.
 */
export function mayResumeInterruptedTurn(deps: TurnEndingDeps, maxResumes: number): boolean {
  const turn = deps.store.turn();
  if (deps.store.status() !== "running" || !turn) return false;
  const resumes = turn.resumes ?? 0;
  if (resumes < maxResumes) return true;
  const times = resumes === 1 ? "once" : `${resumes} times`;
  finishTurn(deps, turn, "failed", "", {
    error: {
      code: "turn_interrupted",
      message:
        resumes === 0
          ? "The turn was interrupted when the session restarted; send the message again."
          : `The turn was interrupted when the session restarted, after it had resumed ${times}; send the message again.`,
    },
  });
  return false;
}

// A person's message an `input` guardrail blocked: nothing of it is stored nor sent. The session keeps the refusal
// alone: the turn that held the session ends failed with `guardrail_blocked` at once (no message, no frame of its
// own: the door answers the refusal), and its timeline holds the guardrail's decision.
import type { TurnObserver } from "../observability/turn-observer";
import { type Refusal, refuse } from "../refusal";
import { blockedError, type Checked, type TurnGuardrails } from "./turn-guardrails";
import type { TurnState, TurnStore } from "./turn-store";

export function refuseBlockedMessage(
  deps: { store: TurnStore; observer?: TurnObserver | undefined; now: () => number },
  guard: TurnGuardrails,
  turn: TurnState,
  input: Checked & { blocked: NonNullable<Checked["blocked"]> },
): Refusal {
  const { turnId } = turn;
  const error = blockedError(input.blocked);
  deps.observer?.runStarted(turnId, "start");
  guard.record(input.decisions);
  deps.observer?.runEnded("failed", { iterations: 0 });
  const at = (ms: number) => new Date(ms).toISOString();
  const ended = { startedAt: at(turn.startedAt), endedAt: at(deps.now()), iterations: 0, error };
  deps.store.recordTurnOutcome({ turnId, status: "failed", ...ended });
  deps.store.saveTurn("idle", null);
  return refuse("guardrail_blocked", error.message, { param: "content" });
}

// A turn's timeline as the route answers it: its stored steps placed on the turn's time axis (an offset from the
// turn's start and a duration each), with the turn's status, span and trace ids.
import type { TimelineStep } from "../observability/turn-observer";
import type { TimelineStatus, TimelineStepView, TurnTimeline } from "../wire/timeline";
import type { SessionStore } from "./session-store";

/** The turn as the session knows it: an ended turn's record, or the open turn (endedAt null). */
export interface TimelineTurn {
  status: TimelineStatus;
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The turn `turnId` as the timeline places it: ended (its record), open (the session's status), or never (null). */
export function timelineTurn(
  store: Pick<SessionStore, "endedTurn" | "turn" | "status">,
  turnId: string,
): TimelineTurn | null {
  const ended = store.endedTurn(turnId);
  if (ended) {
    return { status: ended.status, startedAt: Date.parse(ended.startedAt), endedAt: Date.parse(ended.endedAt) };
  }
  const open = store.turn();
  if (open?.turnId !== turnId) return null;
  const status = store.status();
  // An open turn is never idle; were the status written a moment behind the turn, it is still running.
  return { status: status === "idle" ? "running" : status, startedAt: open.startedAt, endedAt: null };
}

export function turnTimeline(
  ids: { sessionId: string; turnId: string },
  turn: TimelineTurn,
  steps: readonly TimelineStep[],
  now: number,
): TurnTimeline {
  // The axis holds every step: a run's first step is told a moment before the turn's start is written, and a
  // step's end may be written after the turn's record. Offsets are never negative, bars never past the end.
  const start = Math.min(turn.startedAt, ...steps.map((s) => s.startedAt));
  const end = turn.endedAt === null ? null : Math.max(turn.endedAt, ...steps.map((s) => s.endedAt));
  const traceIds = [...new Set(steps.flatMap((s) => (s.traceId ? [s.traceId] : [])))];
  return {
    object: "turn.timeline",
    sessionId: ids.sessionId,
    turnId: ids.turnId,
    status: turn.status,
    startedAt: iso(start),
    endedAt: end === null ? null : iso(end),
    durationMs: Math.max(0, (end ?? Math.max(now, ...steps.map((s) => s.endedAt))) - start),
    traceIds,
    steps: steps.map((step) => stepView(step, start)),
  };
}

function stepView(step: TimelineStep, start: number): TimelineStepView {
  return {
    ...step,
    startedAt: iso(step.startedAt),
    endedAt: iso(step.endedAt),
    offsetMs: step.startedAt - start,
    durationMs: Math.max(0, step.endedAt - step.startedAt),
  };
}

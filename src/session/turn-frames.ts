// A turn's events (what the loop reports as it goes) as the session's logged frames, each carrying the turn's id.
import type { TurnEvents } from "../agent/turn-events";
import type { LoggedFrame } from "../wire/frames";

export interface TurnFrameSource {
  /** The running turn's id ("" before a turn opened). */
  turnId(): string;
  /** A turn starts: its id, from now on what turnId() answers. */
  started(turnId: string): void;
  /** The id the client gave the message that started the turn (the socket door's), or null. */
  clientMessageId(): string | null;
  /** A turn was cancelled: what its model call had streamed is kept in the conversation, before the turn's end is told. */
  cancelled(turnId: string): void;
}

export function turnFrames(emit: (frame: LoggedFrame) => void, source: TurnFrameSource): TurnEvents {
  const turnId = () => source.turnId();
  return {
    turnStarted: (id) => {
      source.started(id);
      emit({ type: "turn_started", turnId: id, clientMessageId: source.clientMessageId() });
    },
    assistantDelta: (text) => emit({ type: "assistant_delta", turnId: turnId(), text }),
    assistantRestarted: (restart) => emit({ type: "assistant_restarted", turnId: turnId(), ...restart }),
    toolCallStarted: (toolCall) => emit({ type: "tool_call_started", turnId: turnId(), toolCall }),
    toolCallCompleted: (toolCall) => emit({ type: "tool_call_completed", turnId: turnId(), toolCall }),
    approvalRequired: (toolCalls) => emit({ type: "approval_required", turnId: turnId(), toolCalls }),
    clientToolRequired: (toolCalls) => emit({ type: "client_tool_required", turnId: turnId(), toolCalls }),
    modeChanged: (change) => emit({ type: "mode_changed", turnId: turnId(), ...change }),
    turnCompleted: (response) => {
      if (response.status === "cancelled") source.cancelled(turnId());
      emit({ type: "turn_completed", turnId: turnId(), response });
    },
  };
}

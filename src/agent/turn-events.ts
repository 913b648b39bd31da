// What happens during a turn, as it happens: the session object turns these into frames for its sockets.
import type { StepRestart } from "../routing/model-router";
import type { AgentExecuteResponse, AgentToolCall } from "../wire/turn";

/** What happens during a turn, as it happens (the WebSocket and SSE doors listen). */
export interface TurnEvents {
  turnStarted?(turnId: string): void;
  assistantDelta?(text: string): void;
  /** The model's stream failed after its first byte: the text it streamed is void, the step starts again. */
  assistantRestarted?(restart: StepRestart): void;
  toolCallStarted?(call: AgentToolCall): void;
  toolCallCompleted?(call: AgentToolCall): void;
  approvalRequired?(calls: AgentToolCall[]): void;
  clientToolRequired?(calls: AgentToolCall[]): void;
  modeChanged?(change: { from: string; to: string; reason: string; branchSessionId?: string }): void;
  turnCompleted?(response: AgentExecuteResponse): void;
}

// What a turn did, step by step, as the loop tells it: each model call (its route, model, first chunk, failovers,
// tokens), each tool call (where it ran), each wait for a person, the client or an MCP server's question, and each
// restart. One seam for two listeners: the turn's timeline (the session object's own record, always kept) and its
// OpenTelemetry spans (when tracing is configured). The loop names no span and no table.
import type { ChatMessage } from "../wire/openai";
import type { TokenUsage } from "../wire/turn";

/** Where a tool call ran: on this server, in the client (an IDE reading a file), or on an MCP server. */
export type ToolRanOn = "server" | "client" | "mcp";

/** What a turn waits for: a person's approval, the client's results, the answer to an MCP server's question. */
export type WaitKind = "approval" | "client" | "elicitation";

/** The route a model call is sent to: its name, provider and upstream model. */
export interface RouteRef {
  name: string;
  provider: string;
  model: string;
}

/** How a model call ended. */
export interface ModelCallEnd {
  /** The route that answered (the last one tried when none did). */
  route: RouteRef;
  usage?: TokenUsage | null | undefined;
  finishReason?: string | null | undefined;
  /** The error's code when the call failed (`model_unavailable`, `cancelled`, ...). */
  error?: string | undefined;
  /** The answer as an assistant message (for content capture, when it is on). */
  output?: ChatMessage | undefined;
}

/** One logical model call: retries and failovers stay inside it. */
export interface ModelCallObservation {
  /** Runs `work` as part of the call (an upstream request made inside it carries the call's trace context). */
  within<T>(work: () => Promise<T>): Promise<T>;
  /** The first chunk of the answer arrived (time to first token). */
  firstChunk(): void;
  /** The route failed before answering and the call goes on to the next one. */
  failover(from: string, to: string, reason: string): void;
  /** The route's stream broke after its first byte: the step starts again on another route. */
  restart(from: string, to: string, discardedChars: number): void;
  end(outcome: ModelCallEnd): void;
}

export interface ToolCallStart {
  id: string;
  name: string;
  ranOn: ToolRanOn;
  /** The MCP server, for a tool of one. */
  mcpServer?: string | undefined;
  arguments?: string | undefined;
  /** When it started, if before now (a client's call, which ran while the turn was paused). */
  startedAt?: number | undefined;
}

export interface ToolCallObservation {
  within<T>(work: () => Promise<T>): Promise<T>;
  /** `error`: why the call failed (the tool's message), absent when it succeeded. */
  end(outcome: { error?: string | null | undefined; result?: string | null | undefined }): void;
}

export interface WaitObservation {
  end(): void;
}

/** How one run of a turn (a segment: from a request that drives it to its answer or pause) is observed. */
export interface TurnObserver {
  /** A run of the turn starts (or resumes after a pause or restart). */
  runStarted(turnId: string, how: "start" | "resume_pause" | "resume_restart"): void;
  /** The run ended: the turn answered, paused, failed. */
  runEnded(outcome: string, details: { iterations: number; usage?: TokenUsage | null | undefined }): void;
  /** A model call starts on `route` (the first of its chain); `input`: its messages, asked for only if captured. */
  modelCall(route: RouteRef, input?: () => readonly ChatMessage[]): ModelCallObservation;
  toolCall(call: ToolCallStart): ToolCallObservation;
  /** A wait starts now (`startedAt` in the past for one that started in an earlier run: a pause). */
  wait(kind: WaitKind, detail: { name: string; toolCallId?: string; startedAt?: number }): WaitObservation;
}

const NO_WAIT: WaitObservation = { end: () => undefined };

/** Observes nothing: the loop's default when no one listens. */
export const UNOBSERVED: TurnObserver = {
  runStarted: () => undefined,
  runEnded: () => undefined,
  modelCall: () => ({
    within: (work) => work(),
    firstChunk: () => undefined,
    failover: () => undefined,
    restart: () => undefined,
    end: () => undefined,
  }),
  toolCall: () => ({ within: (work) => work(), end: () => undefined }),
  wait: () => NO_WAIT,
};

/** One step of a turn's timeline, as the session object records it (the timeline route answers these). */
export interface TimelineStep {
  /**
   * `run`: one run of the turn (from the request that drives it to its answer or pause; a turn that waits for a
   * person or the client has several); `model_call`, `tool_call`, `wait` have a duration; `failover` and `restart`
   * are instants.
   */
  kind: "run" | "model_call" | "tool_call" | "wait" | "failover" | "restart";
  /**
   * How the run started (`start`, `resume_pause`, `resume_restart`), the model (model_call), the tool (tool_call),
   * what was waited for (wait: `approval`, `client`, `elicitation`), `from → to` (failover, restart).
   */
  name: string;
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt: number;
  /** model_call: the route that answered, its provider and model; time to first token; tokens. */
  route?: string;
  provider?: string;
  model?: string;
  ttftMs?: number | null;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  finishReason?: string | null;
  /** tool_call and wait: the call, and where it ran. */
  toolCallId?: string;
  ranOn?: ToolRanOn;
  mcpServer?: string;
  /** run: how it ended (`completed`, `awaiting_approval`, `failed`, ...) and the model calls it made. */
  outcome?: string;
  iterations?: number;
  /** run: the version of the session's mode the run ran with (docs/modes.md, Versions). */
  modeVersion?: number;
  /** The error's code or message when the step failed. */
  error?: string;
  /** The OpenTelemetry span of the step, when tracing was on. */
  traceId?: string;
  spanId?: string;
}

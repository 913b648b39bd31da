// A turn's frames (the session's SSE stream of them, src/session/frame-hub.ts) read as what the A2A door tells: the
// turn's id when it starts, its text as it grows (or taken back when the model's stream broke and the step started
// again, or a restart cut it off), and where it stopped, as a snapshot of the task.
import { sseData } from "../llm/sse-lines";
import type { ServerFrame } from "../wire/frames";
import type { AgentExecuteResponse } from "../wire/turn";
import type { TurnSnapshot } from "./task-shapes";

export type TurnStreamEvent =
  | { kind: "started"; turnId: string }
  /** The answer's text: `delta` to append, or (`replace`) the whole text as it now stands. */
  | { kind: "text"; delta: string; replace: boolean; text: string }
  | { kind: "stopped"; turn: TurnSnapshot };

/** An AgentExecuteResponse (how a turn stopped) as a snapshot of its task. */
export function snapshotOfResponse(turnId: string, response: AgentExecuteResponse, at: string): TurnSnapshot {
  const base = { sessionId: response.sessionId, turnId, text: response.text, at, error: response.error ?? null };
  switch (response.status) {
    case "completed":
      return { ...base, status: "completed", pending: null, error: null };
    case "failed":
      return { ...base, status: "failed", pending: null };
    case "cancelled":
      return { ...base, status: "cancelled", pending: null };
    default: {
      // Paused: for approvals, for a client's results, or for the answer to an MCP server's question.
      const waiting = response.toolCalls.filter((call) => call.approval === "pending" || isClientCall(call));
      return {
        ...base,
        status: "paused",
        pending: {
          approvals: waiting.filter((call) => call.approval === "pending"),
          clientCalls: waiting.filter((call) => call.approval !== "pending" && isClientCall(call)),
        },
        error: null,
      };
    }
  }
}

function isClientCall(call: AgentExecuteResponse["toolCalls"][number]): boolean {
  return call.requiresClientExecution && call.wasExecuted && call.errorMessage === null;
}

type StreamFrame = ServerFrame | { type: "error"; code: string; message: string };

/** The turn's events from its frames; a refusal frame (the stream's `error`) stops it as failed. */
export async function* turnStreamEvents(
  frames: ReadableStream<Uint8Array>,
  sessionId: string,
  now: () => string,
): AsyncGenerator<TurnStreamEvent> {
  let turnId = "";
  let text = "";
  for await (const data of sseData(frames)) {
    const frame = JSON.parse(data) as StreamFrame;
    if (frame.type === "turn_started") {
      turnId = frame.turnId;
      yield { kind: "started", turnId };
    } else if (frame.type === "assistant_delta") {
      text += frame.text;
      yield { kind: "text", delta: frame.text, replace: false, text };
    } else if (frame.type === "assistant_restarted" || frame.type === "turn_resumed") {
      text = text.slice(0, Math.max(0, text.length - frame.discardedChars));
      yield { kind: "text", delta: "", replace: true, text };
    } else if (frame.type === "turn_completed") {
      yield { kind: "stopped", turn: snapshotOfResponse(frame.turnId, frame.response, now()) };
      return;
    } else if (frame.type === "error") {
      const error = { code: frame.code, message: frame.message };
      yield { kind: "stopped", turn: { sessionId, turnId, status: "failed", text, pending: null, error, at: now() } };
      return;
    }
  }
}

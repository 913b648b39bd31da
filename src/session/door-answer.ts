// What the agent's OpenAI door answers a request, as the client reads it: the answer's text and the client's tool
// calls. The Worker writes it out (src/agent-wire/completion.ts); the session's object reads the same frames to
// record the conversation's head (src/session/thread-head.ts) before the answer ends, so both must read them alike.
import type { ServerFrame } from "../wire/frames";
import type { OpenAIToolCall } from "../wire/openai";
import type { AgentExecuteResponse, AgentToolCall, TokenUsage } from "../wire/turn";
import { approvalRequest } from "./approval-words";

/** What a streamed door answer says when the model's stream broke mid-answer and the step started again. */
export const RESTARTED_NOTE = "(The model service failed in the middle of this answer; it starts again below.)";

/**
 * The last event of a door's stream of frames (for the Worker alone, not a frame of the protocol): this request's
 * tokens (a resumed turn's earlier requests not counted again), and the conversation's head, recorded. A session
 * object of the version before sends the same event without the head (a deploy's few minutes of mixed versions).
 */
export interface DoorEnd {
  type: "door_usage";
  usage: TokenUsage | null;
  head?: string | null;
  /** D1 took the head (src/session/chat-turns.ts). */
  headWritten?: boolean;
}

/** The answer as the client reads it, from the turn's response, its text and the calls that wait for the client. */
export function doorReply(
  response: AgentExecuteResponse,
  text: string,
  waitingForClient: readonly string[],
  clientTools: ReadonlySet<string>,
): { content: string; toolCalls: OpenAIToolCall[] } {
  const waiting = new Set(waitingForClient);
  return {
    content: answerText(response, text),
    toolCalls: clientToolCalls(
      response.toolCalls.filter((t) => waiting.has(t.id)),
      clientTools,
    ),
  };
}

/** The calls the client carries out: those of its own tools that wait for it. */
export function clientToolCalls(calls: readonly AgentToolCall[], clientTools: ReadonlySet<string>): OpenAIToolCall[] {
  return calls
    .filter((c) => c.requiresClientExecution && clientTools.has(c.name) && c.wasExecuted && c.errorMessage === null)
    .map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.argumentsJson } }));
}

/** What the answer says: the agent's text, then (for a turn waiting for approval) the request in words. */
export function answerText(response: AgentExecuteResponse, text: string): string {
  if (response.status !== "awaiting_approval") return text;
  const waiting = response.toolCalls.filter((c) => c.approval === "pending");
  return [text, approvalRequest(waiting)].filter(Boolean).join("\n\n");
}

/** A turn that ended this way answers the door with an error, not an answer (and records no head). */
export function endedWithoutAnswer(response: AgentExecuteResponse): boolean {
  return response.status === "failed" || response.status === "cancelled";
}

/**
 * A streamed answer, frame by frame: the text each frame adds (the model's text; after a restart, a note and the
 * text again; the approval request in words), and the client's tool calls.
 */
export class StreamedAnswerText {
  content = "";
  toolCalls: OpenAIToolCall[] = [];
  /** Text of a model response after an earlier one's (which asked for tools) starts a new paragraph. */
  private newParagraph = false;

  constructor(private readonly clientTools: ReadonlySet<string>) {}

  /** The text `frame` adds to the answer (often none). */
  see(frame: ServerFrame): string {
    switch (frame.type) {
      case "assistant_delta":
        return this.said(frame.text);
      case "assistant_restarted":
      case "turn_resumed": {
        // OpenAI's stream has no way to take text back: the client is told in words, and the answer starts over.
        this.newParagraph = true;
        const note = this.said(RESTARTED_NOTE);
        this.newParagraph = true;
        return note;
      }
      case "tool_call_started":
        this.newParagraph = true;
        return "";
      case "client_tool_required":
        this.toolCalls = clientToolCalls(frame.toolCalls, this.clientTools);
        return "";
      case "approval_required":
        this.newParagraph = true;
        return this.said(approvalRequest(frame.toolCalls.filter((c) => c.approval === "pending")));
      default:
        return "";
    }
  }

  private said(text: string): string {
    if (!text) return "";
    const piece = this.newParagraph && this.content ? `\n\n${text}` : text;
    this.newParagraph = false;
    this.content += piece;
    return piece;
  }
}

// The agent's answer on the OpenAI wire: a `chat.completion`, or `chat.completion.chunk` events made from the
// frames the session logs while the turn runs (text as the model writes it, the client's tool calls, the
// approval request in words), ended by `[DONE]`. The client's tool calls are OpenAI `tool_calls`; the mode's
// own tools run inside the session and are not shown.

import { joinBytes } from "../bytes";
import { type ErrorCode, errorBody, withRetryAfterSeconds } from "../errors";
import { sseData } from "../llm/sse-lines";
import { approvalRequest } from "../session/approval-words";
import type { ServerFrame } from "../wire/frames";
import {
  type ChatChunkDelta,
  type ChatChunkJson,
  type CompletionBase,
  chatCompletion,
  chunkJson,
  DONE_EVENT,
  type OpenAIToolCall,
  type OpenAIUsage,
  openAIUsage,
  usageChunkJson,
} from "../wire/openai";
import type { AgentExecuteResponse, AgentToolCall, TokenUsage } from "../wire/turn";

/** A stream cut off mid-answer: most often the session's object restarted, and then the turn resumes by itself. */
export const BROKE_OFF =
  "The answer broke off. If the session restarted, its turn resumes by itself and the answer will be in the session (X-Aptix-Session); otherwise send the message again.";

export function completionMeta(model: string, now = Date.now()): CompletionBase {
  return { id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`, created: Math.floor(now / 1000), model };
}

/** The calls the client carries out: those of its own tools that wait for it. */
export function clientToolCalls(calls: readonly AgentToolCall[], clientTools: ReadonlySet<string>): OpenAIToolCall[] {
  return calls
    .filter((c) => c.requiresClientExecution && clientTools.has(c.name) && c.wasExecuted && c.errorMessage === null)
    .map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.argumentsJson } }));
}

/**
 * The model failures a door answers with their own code, as OpenAI answers them (a context too long is a 400
 * `context_length_exceeded`, a rate limit a 429 with Retry-After): the client can act on them. The other model
 * failures are the server's (its key, its model, its upstream) and answer 502 `agent_model_failed`, the cause in
 * the message: a 404 `model_not_found` here would tell the client its own `model` (the mode) is wrong.
 */
const OWN_CODE: ReadonlySet<string> = new Set([
  "rate_limit_exceeded",
  "context_length_exceeded",
  "content_filtered",
  "model_bad_request",
  "model_rate_limited",
  // An output guardrail blocked the answer: the client's request was refused, as an input guardrail's is.
  "guardrail_blocked",
]);

export interface TurnFailure {
  code: ErrorCode;
  message: string;
  /** The seconds the model service asked us to wait: the door's Retry-After (a header, or a field of the error event). */
  retryAfterSeconds?: number;
}

/** Why a turn that ended without an answer is an error on this wire, with its HTTP code. */
export function turnFailure(response: AgentExecuteResponse): TurnFailure | null {
  if (response.status === "failed") {
    const cause = response.error?.code ?? "unknown";
    const wait = response.error?.retryAfterSeconds;
    const retry = wait === undefined ? {} : { retryAfterSeconds: wait };
    if (OWN_CODE.has(cause)) return { code: cause as ErrorCode, message: response.error?.message ?? "", ...retry };
    const code: ErrorCode = cause.startsWith("model_") ? "agent_model_failed" : "agent_turn_failed";
    return {
      code,
      message: `The agent's turn failed (${cause}): ${response.error?.message ?? "no details"}`,
      ...retry,
    };
  }
  if (response.status === "cancelled") return { code: "agent_turn_failed", message: "The agent's turn was cancelled." };
  return null;
}

/** A failure's Retry-After header, when it has one. */
export function retryHeaders(failure: TurnFailure): Record<string, string> {
  return failure.retryAfterSeconds === undefined ? {} : { "retry-after": String(failure.retryAfterSeconds) };
}

/** What the answer says: the agent's text, then (for a turn waiting for approval) the request in words. */
export function answerText(response: AgentExecuteResponse, text: string): string {
  if (response.status !== "awaiting_approval") return text;
  const waiting = response.toolCalls.filter((c) => c.approval === "pending");
  return [text, approvalRequest(waiting)].filter(Boolean).join("\n\n");
}

const NO_USAGE: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

function usageJson(usage: TokenUsage | undefined): OpenAIUsage {
  return openAIUsage(usage ?? NO_USAGE);
}

export function completionJson(
  meta: CompletionBase,
  content: string,
  toolCalls: OpenAIToolCall[],
  usage: TokenUsage | undefined,
) {
  return chatCompletion(meta, {
    content,
    toolCalls,
    finish: toolCalls.length > 0 ? "tool_calls" : "stop",
    usage: usageJson(usage),
  });
}

export interface StreamedAnswer {
  content: string;
  toolCalls: OpenAIToolCall[];
  /** The turn ended in a way this wire reports as an error (sent as an error event). */
  failed: boolean;
  /** The turn that answered, as its frames name it. */
  turnId: string | null;
}

/** What a streamed door answer says when the model's stream broke mid-answer and the step started again. */
export const RESTARTED_NOTE = "(The model service failed in the middle of this answer; it starts again below.)";

const encoder = new TextEncoder();

/** A chunk of the door's stream as an object (what `chunkEvent` writes), or an error event's body. */
export type DoorStreamItem =
  | { kind: "chunk"; chunk: ChatChunkJson }
  | { kind: "error"; body: ReturnType<typeof errorBody> };

export interface DoorStreamOptions {
  clientTools: ReadonlySet<string>;
  includeUsage: boolean;
  /** Sees what was answered (for the session's head) before the stream's last chunks go out. */
  onEnd: (answer: StreamedAnswer) => Promise<void>;
  /** Told of an unexpected failure while the stream runs (its stack goes to the log, never to the client). */
  onBreak: (error: unknown) => void;
}

/**
 * The frames of a turn as chat completion chunks (objects; each wire writes them its own way). `onEnd` runs before
 * the finish chunk, so a client that sends its next request as soon as its stream ends finds the session's head.
 */
export async function* doorChunks(
  frames: ReadableStream<Uint8Array>,
  meta: CompletionBase,
  options: DoorStreamOptions,
): AsyncGenerator<DoorStreamItem> {
  const chunk = (delta: ChatChunkDelta, finish: string | null): DoorStreamItem => ({
    kind: "chunk",
    chunk: chunkJson(meta, delta, finish, options.includeUsage),
  });
  const failure = (code: ErrorCode, message: string, retryAfterSeconds?: number): DoorStreamItem => ({
    kind: "error",
    // A stream's error event has no headers: its Retry-After rides in the error, as `retry_after_seconds`.
    body: withRetryAfterSeconds(errorBody(code, message), retryAfterSeconds),
  });
  const answer: StreamedAnswer = { content: "", toolCalls: [], failed: false, turnId: null };
  // Text of a model response after an earlier one's (which asked for tools) starts a new paragraph.
  let newParagraph = false;
  const said = (text: string): DoorStreamItem[] => {
    if (!text) return [];
    const piece = newParagraph && answer.content ? `\n\n${text}` : text;
    newParagraph = false;
    answer.content += piece;
    return [chunk({ content: piece }, null)];
  };
  let finish: string | null = null;
  let usage: TokenUsage | undefined;
  yield chunk({ role: "assistant", content: "" }, null);
  try {
    for await (const data of sseData(frames)) {
      const frame = JSON.parse(data) as
        | ServerFrame
        | { type: "error"; code: string; message: string }
        | { type: "door_usage"; usage: TokenUsage | null };
      if ("turnId" in frame && typeof frame.turnId === "string") answer.turnId = frame.turnId;
      if (frame.type === "assistant_delta") yield* said(frame.text);
      else if (frame.type === "assistant_restarted" || frame.type === "turn_resumed") {
        // OpenAI's stream has no way to take text back: the client is told in words, and the answer starts over.
        newParagraph = true;
        yield* said(RESTARTED_NOTE);
        newParagraph = true;
      } else if (frame.type === "tool_call_started") newParagraph = true;
      else if (frame.type === "client_tool_required") {
        answer.toolCalls = clientToolCalls(frame.toolCalls, options.clientTools);
        if (answer.toolCalls.length > 0) {
          yield chunk({ tool_calls: answer.toolCalls.map((call, index) => ({ index, ...call })) }, null);
        }
        finish = answer.toolCalls.length > 0 ? "tool_calls" : "stop";
      } else if (frame.type === "approval_required") {
        newParagraph = true;
        yield* said(approvalRequest(frame.toolCalls.filter((c) => c.approval === "pending")));
        finish = "stop";
      } else if (frame.type === "door_usage") {
        // This request's tokens (a resumed turn's earlier requests not counted again), sent as the turn stops.
        usage = frame.usage ?? undefined;
      } else if (frame.type === "turn_completed") {
        const failed = turnFailure(frame.response);
        if (failed) {
          answer.failed = true;
          yield failure(failed.code, failed.message, failed.retryAfterSeconds);
        }
        finish = "stop";
      } else if (frame.type === "error") {
        answer.failed = true;
        yield failure(frame.code as ErrorCode, frame.message);
      }
    }
    if (!answer.failed) {
      await options.onEnd(answer);
      yield chunk({}, finish ?? "stop");
      if (options.includeUsage) {
        yield { kind: "chunk", chunk: usageChunkJson(meta, usageJson(usage)) };
      }
    }
  } catch (error) {
    options.onBreak(error);
    yield failure("internal_error", BROKE_OFF);
  }
}

/** How a wire writes the door's items: the bytes of one item (none is fine), and the stream's last bytes. */
export interface DoorWire {
  write(item: DoorStreamItem): Uint8Array[];
  finish(): Uint8Array[] | Promise<Uint8Array[]>;
}

/**
 * The door's items as an event stream, read as the client reads it: a client that goes away stops the turn's
 * stream (the turn itself goes on in its session).
 */
export function doorEventStream(items: AsyncGenerator<DoorStreamItem>, wire: DoorWire): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Until something is written: an item that writes nothing must not leave the reader waiting.
      for (;;) {
        const next = await items.next();
        const out = next.done ? await wire.finish() : wire.write(next.value);
        // One write for all of an item's events (a text delta often comes with the events that open its block).
        if (out.length > 0) controller.enqueue(joinBytes(out));
        if (next.done) {
          controller.close();
          return;
        }
        if (out.length > 0) return;
      }
    },
    async cancel() {
      await items.return(undefined);
    },
  });
}

/** The door's chunks as chat completions' event stream, ended by `[DONE]`. */
export function chatEventStream(items: AsyncGenerator<DoorStreamItem>): ReadableStream<Uint8Array> {
  return doorEventStream(items, {
    write: (item) => [encoder.encode(`data: ${JSON.stringify(item.kind === "chunk" ? item.chunk : item.body)}\n\n`)],
    finish: () => [encoder.encode(DONE_EVENT)],
  });
}

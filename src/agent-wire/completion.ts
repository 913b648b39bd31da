// The agent's answer on the OpenAI wire: a `chat.completion`, or `chat.completion.chunk` events made from the
// frames the session logs while the turn runs (text as the model writes it, the client's tool calls, the
// approval request in words), ended by `[DONE]`. The client's tool calls are OpenAI `tool_calls`; the mode's
// own tools run inside the session and are not shown.

import { joinBytes } from "../bytes";
import { type ErrorCode, errorBody, withRetryAfterSeconds } from "../errors";
import { sseData } from "../llm/sse-lines";
import { type DoorEnd, endedWithoutAnswer, StreamedAnswerText } from "../session/door-answer";
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
import type { AgentExecuteResponse, TokenUsage } from "../wire/turn";

/** A stream cut off mid-answer: most often the session's object restarted, and then the turn resumes by itself. */
export const BROKE_OFF =
  "The answer broke off. If the session restarted, its turn resumes by itself and the answer will be in the session (X-Aptix-Session); otherwise send the message again.";

export function completionMeta(model: string, now = Date.now()): CompletionBase {
  return { id: `chatcmpl-${crypto.randomUUID().replaceAll("-", "")}`, created: Math.floor(now / 1000), model };
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
  if (!endedWithoutAnswer(response)) return null;
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
  return { code: "agent_turn_failed", message: "The agent's turn was cancelled." };
}

/** A failure's Retry-After header, when it has one. */
export function retryHeaders(failure: TurnFailure): Record<string, string> {
  return failure.retryAfterSeconds === undefined ? {} : { "retry-after": String(failure.retryAfterSeconds) };
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
  /** What the client was sent: the text and its tool calls. */
  content: string;
  toolCalls: OpenAIToolCall[];
  /** The turn ended in a way this wire reports as an error (sent as an error event). */
  failed: boolean;
  /** The turn that answered, as its frames name it. */
  turnId: string | null;
  /**
   * The conversation's head after the answer, as the session recorded it (src/session/thread-head.ts); undefined
   * when a session object of the version before answered, which records none.
   */
  head: string | null | undefined;
  /** D1 took the head (else the session alone keeps it). */
  headWritten: boolean;
}

const encoder = new TextEncoder();

/** A chunk of the door's stream as an object (what `chunkEvent` writes), or an error event's body. */
export type DoorStreamItem =
  | { kind: "chunk"; chunk: ChatChunkJson }
  | { kind: "error"; body: ReturnType<typeof errorBody> };

export interface DoorStreamOptions {
  clientTools: ReadonlySet<string>;
  includeUsage: boolean;
  /** Sees how the turn ended (its id, the head the session recorded) before the stream's last chunks go out. */
  onEnd: (answer: StreamedAnswer) => void | Promise<void>;
  /** Told of an unexpected failure while the stream runs (its stack goes to the log, never to the client). */
  onBreak: (error: unknown) => void;
}

/**
 * The frames of a turn as chat completion chunks (objects; each wire writes them its own way). The session records
 * the conversation's head before its stream ends, so a client that sends its next request as soon as its stream
 * ends finds it.
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
  const text = new StreamedAnswerText(options.clientTools);
  const answer: StreamedAnswer = {
    content: "",
    toolCalls: [],
    failed: false,
    turnId: null,
    head: undefined,
    headWritten: false,
  };
  let finish: string | null = null;
  let usage: TokenUsage | undefined;
  yield chunk({ role: "assistant", content: "" }, null);
  try {
    for await (const data of sseData(frames)) {
      const frame = JSON.parse(data) as ServerFrame | { type: "error"; code: string; message: string } | DoorEnd;
      if ("turnId" in frame && typeof frame.turnId === "string") answer.turnId = frame.turnId;
      if (frame.type === "door_usage") {
        // This request's tokens (a resumed turn's earlier requests not counted again) and the head, as the turn stops.
        usage = frame.usage ?? undefined;
        answer.head = frame.head;
        answer.headWritten = frame.headWritten ?? false;
        continue;
      }
      if (frame.type === "error") {
        answer.failed = true;
        yield failure(frame.code as ErrorCode, frame.message);
        continue;
      }
      const piece = text.see(frame);
      if (piece) yield chunk({ content: piece }, null);
      if (frame.type === "client_tool_required") {
        if (text.toolCalls.length > 0) {
          yield chunk({ tool_calls: text.toolCalls.map((call, index) => ({ index, ...call })) }, null);
        }
        finish = text.toolCalls.length > 0 ? "tool_calls" : "stop";
      } else if (frame.type === "approval_required") finish = "stop";
      else if (frame.type === "turn_completed") {
        const failed = turnFailure(frame.response);
        if (failed) {
          answer.failed = true;
          yield failure(failed.code, failed.message, failed.retryAfterSeconds);
        }
        finish = "stop";
      }
    }
    if (!answer.failed) {
      answer.content = text.content;
      answer.toolCalls = text.toolCalls;
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

// Workers AI (the AI binding) as model events: `runWorkersAi(ai, model, inputs)` calls `ai.run(model, {messages,
// tools, stream, ...})` and yields what the binding answered as the project's own model events (model-events.ts).
// The loop's ChatModel (workers-ai-chat-model.ts) folds them into its answer and the passthrough's OpenAI face
// (workers-ai-openai-face.ts) writes them as OpenAI's shapes, so one mapping serves both, with no OpenAI HTTP
// body between the binding and the loop.
//
// What the binding answers (Cloudflare's documented shapes, and the newer models' OpenAI ones):
// - plain: `{response, tool_calls?, usage?}`, tool calls as `{name, arguments: object}` (the older models) or
//   `{id, type: "function", function: {name, arguments: string}}`; some models answer a whole
//   `chat.completion` (`choices[0].message`) instead.
// - `stream: true`: a byte stream of server-sent events, `data: {"response":"..."}` pieces, a last one with
//   `usage`, `data: [DONE]`; tool calls as a `tool_calls` event, or OpenAI chunks (`choices[0].delta`).
// - a failure: `run` throws an Error whose message starts with Workers AI's numeric code ("3040: Capacity
//   temporarily exceeded..."); the code decides the status it stands for.

import { createParser } from "eventsource-parser";
import { z } from "zod";
import { UsageJson } from "../wire/openai";
import type { TokenUsage } from "../wire/turn";
import { ModelError, type ModelErrorCode } from "./chat-model";
import type { ModelEvent } from "./model-events";
import { classifyUpstreamError } from "./upstream-error";

/** What the adapter needs of the `Ai` binding. */
export interface WorkersAiBinding {
  run(model: string, inputs: Record<string, unknown>, options?: Record<string, unknown>): Promise<unknown>;
}

/** The Worker's AI binding, when it has one that can run models. */
export function aiBinding(env: object): WorkersAiBinding | null {
  const ai: unknown = Reflect.get(env, "AI");
  return typeof ai === "object" && ai !== null && "run" in ai && typeof ai.run === "function"
    ? (ai as WorkersAiBinding)
    : null;
}

/** A tool call in either of the binding's shapes, or an OpenAI stream fragment (with an index). */
const ToolCallOut = z.union([
  z.object({
    index: z.number().optional(),
    id: z.string().optional(),
    type: z.string().optional(),
    function: z.object({
      name: z.string().optional(),
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
    }),
  }),
  z.object({ id: z.string().optional(), name: z.string(), arguments: z.unknown().optional() }),
]);
type ToolCallOut = z.infer<typeof ToolCallOut>;

const Choice = z.object({
  message: z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCallOut).nullish() }).optional(),
  delta: z.object({ content: z.string().nullish(), tool_calls: z.array(ToolCallOut).nullish() }).optional(),
  finish_reason: z.string().nullish(),
});

/** One answer (or one stream event) of the binding. */
const AiOutput = z.looseObject({
  response: z.unknown().optional(),
  tool_calls: z.array(ToolCallOut).nullish(),
  usage: UsageJson.nullish(),
  choices: z.array(Choice).optional(),
  error: z.unknown().optional(),
  errors: z.unknown().optional(),
});
type AiOutput = z.infer<typeof AiOutput>;

/**
 * An answer of the binding, or (in a stream) one of its events; throws for anything else: an error object
 * (`{"error": ...}`, `{"success": false, "errors": [...]}`) or an object that carries no answer at all. A
 * stream's last event may carry only its usage.
 */
function answerOf(value: unknown, streamed: boolean): AiOutput {
  const parsed = AiOutput.safeParse(value);
  if (!parsed.success) throw new Error("an output that is not a text generation output");
  const output = parsed.data;
  if (output.error !== undefined || output.errors !== undefined || output.success === false) {
    throw new Error(`an error in place of an answer: ${JSON.stringify(output.error ?? output.errors).slice(0, 300)}`);
  }
  const answers = output.response !== undefined || output.choices !== undefined || output.tool_calls != null;
  if (!answers && !(streamed && output.usage)) throw new Error("an output that carries no answer");
  return output;
}

/** What one answer or event says: text, whole or partial tool calls, a finish reason, usage. */
interface Piece {
  text: string;
  calls: ToolCallOut[];
  finish: string | null;
  usage: TokenUsage | null;
}

function pieceOf(output: AiOutput): Piece {
  const choice = output.choices?.[0];
  const part = choice?.message ?? choice?.delta;
  const response = output.response;
  const text =
    (typeof response === "string" ? response : response != null ? JSON.stringify(response) : "") +
    (part?.content ?? "");
  const calls = [...(output.tool_calls ?? []), ...(part?.tool_calls ?? [])];
  return { text, calls, finish: choice?.finish_reason ?? null, usage: output.usage ?? null };
}

function callName(call: ToolCallOut): string {
  return "function" in call ? (call.function.name ?? "") : call.name;
}

function callArguments(call: ToolCallOut): string {
  const args = "function" in call ? call.function.arguments : call.arguments;
  if (args === undefined || args === null) return "";
  return typeof args === "string" ? args : JSON.stringify(args);
}

/**
 * The status a binding failure stands for, from Workers AI's error code: capacity and quota are 429, a
 * timeout 504, a request the model refuses 400, an account problem 401; anything else is the service's 502.
 */
function statusOfAiError(message: string): number {
  const code = Number(/\b(\d{4,5})\b/.exec(message)?.[1] ?? Number.NaN);
  if (code === 3040 || code === 3036 || /capacity|rate limit|too many/i.test(message)) return 429;
  if (code === 3007 || code === 3008 || /time(d)? ?out/i.test(message)) return 504;
  if (code === 10000 || /authenticat|unauthori[sz]ed/i.test(message)) return 401;
  if (
    code === 5007 ||
    code === 5006 ||
    code === 3006 ||
    code === 3010 ||
    /no such model|invalid input/i.test(message)
  ) {
    return 400;
  }
  return 502;
}

/** Text of an OpenAI message's content: a string, or an array of parts whose text parts are joined. */
function textOf(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content
    .map((part: unknown) =>
      typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? part.text : "",
    )
    .join("");
}

/** The OpenAI request fields the binding takes, under its names. */
const PASSED = ["tools", "temperature", "top_p", "seed", "frequency_penalty", "presence_penalty", "response_format"];

/** The binding's inputs for an OpenAI chat completions request (`body`): its messages, as text, and what it takes. */
export function aiInputs(body: Record<string, unknown>, stream: boolean): Record<string, unknown> {
  const messages = Array.isArray(body.messages)
    ? body.messages.map((m: unknown) =>
        typeof m === "object" && m !== null && "content" in m ? { ...m, content: textOf(m.content) ?? "" } : m,
      )
    : [];
  const inputs: Record<string, unknown> = { messages, stream };
  for (const name of PASSED) if (body[name] !== undefined && body[name] !== null) inputs[name] = body[name];
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === "number") inputs.max_tokens = maxTokens;
  return inputs;
}

/** Resolves with `work`, or rejects with the signal's reason when it aborts first (the binding takes no signal). */
function raced<T>(work: Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The binding failed before it answered: `run` threw, or answered with something that is not an answer. For the
 * loop a ModelError of the status it stands for; `openAICode` and the detail (the binding's words, which name no
 * secret of ours) are what the OpenAI face answers with, as an upstream's own error body would be.
 */
export class WorkersAiError extends ModelError {
  declare readonly status: number;

  constructor(
    status: number,
    readonly openAICode: string,
    detail: string,
  ) {
    super(workersAiCause(status, detail), detail, status);
  }
}

/** The binding's error as our cause: its status's, read with its words (`5007: No such model`, a context too long). */
function workersAiCause(status: number, detail: string): ModelErrorCode {
  return classifyUpstreamError(status, { code: null, type: null, message: detail.replace(/^Workers AI: /, "") });
}

function badAnswer(what: string): WorkersAiError {
  return new WorkersAiError(502, "workers_ai_bad_response", `Workers AI sent ${what}.`);
}

/** What the binding answered: all its events at once, or (`streamed`) as its event stream brings them. */
export type WorkersAiAnswer = {
  /** The answer's id (`chatcmpl-wai-...`); the tool call ids made up for it end with its last characters. */
  id: string;
} & ({ streamed: false; events: ModelEvent[] } | { streamed: true; events: AsyncIterable<ModelEvent> });

/**
 * Calls the binding with `inputs` (aiInputs) and answers with its events; a binding that fails is a
 * WorkersAiError. An abort of `signal` (a deadline, a client that left) rejects at once, and stops a stream.
 */
export async function runWorkersAi(
  ai: WorkersAiBinding,
  model: string,
  inputs: Record<string, unknown>,
  signal?: AbortSignal | null,
): Promise<WorkersAiAnswer> {
  let output: unknown;
  try {
    output = await raced(ai.run(model, inputs), signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const status = statusOfAiError(message);
    const cause = workersAiCause(status, message);
    // A cause OpenAI names with a code of its own is answered with it on the OpenAI face, as OpenAI would.
    const code = cause === "model_not_found" || cause === "context_length_exceeded" ? cause : `workers_ai_${status}`;
    throw new WorkersAiError(status, code, `Workers AI: ${message}`);
  }
  const id = `chatcmpl-wai-${crypto.randomUUID()}`;
  if (output instanceof ReadableStream) {
    if (inputs.stream !== true) {
      // The stream is refused either way; a failure to cancel it leaves nothing to do.
      output.cancel().catch(() => undefined);
      throw badAnswer("a stream it was not asked for");
    }
    return { id, streamed: true, events: streamedEvents(output, id, signal) };
  }
  let answer: AiOutput;
  try {
    answer = answerOf(output, false);
  } catch (error) {
    throw badAnswer(error instanceof Error ? error.message : "an answer that is not a text generation output");
  }
  return { id, streamed: false, events: wholeEvents(answer, id) };
}

/** The id of a tool call the binding sent without one. */
function callId(answerId: string, index: number): string {
  return `call_${answerId.slice(-12)}_${index}`;
}

/** A whole answer's events: its text, its calls (each with an id and its arguments as JSON text), usage, finish. */
function wholeEvents(output: AiOutput, answerId: string): ModelEvent[] {
  const piece = pieceOf(output);
  const events: ModelEvent[] = piece.text ? [{ type: "text", text: piece.text }] : [];
  for (const [index, call] of piece.calls.entries()) {
    events.push({
      type: "tool_call",
      index,
      id: ("id" in call && call.id) || callId(answerId, index),
      name: callName(call),
      arguments: callArguments(call) || "{}",
    });
  }
  if (piece.usage) events.push({ type: "usage", usage: piece.usage });
  events.push({ type: "finish", reason: piece.finish ?? (piece.calls.length > 0 ? "tool_calls" : "stop") });
  return events;
}

/**
 * The binding's event stream as model events: text pieces, tool calls (whole, or as OpenAI fragments), then the
 * usage and the finish. Read as the consumer pulls; an abort of `signal` cancels the binding's stream at once,
 * even in the middle of a read. An event that is not an answer's (not JSON, an error event), or a stream that
 * ends without [DONE] and without a finish, is a bad response, so a reader never takes a cut stream as whole.
 */
function streamedEvents(
  source: ReadableStream<Uint8Array>,
  answerId: string,
  signal: AbortSignal | null | undefined,
): AsyncIterable<ModelEvent> {
  // Our own reader (not sseData's generator): cancelling it cancels the pipe and the binding's stream at once.
  const reader = source.pipeThrough(new TextDecoderStream()).getReader();
  const stop = (reason: unknown) => {
    reader.cancel(reason).catch(() => {});
  };
  const onAbort = () => stop(signal?.reason);
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });

  const ready: string[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event.data) });
  let ended = false;
  /** The next event's data, or null when the stream has ended. */
  const nextEvent = async (): Promise<string | null> => {
    while (ready.length === 0) {
      if (ended) return null;
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) {
        ended = true;
        parser.reset({ consume: true });
      } else parser.feed(value);
    }
    return ready.shift() ?? null;
  };

  async function* events(): AsyncGenerator<ModelEvent> {
    let usage: TokenUsage | null = null;
    let finish: string | null = null;
    let sawCalls = false;
    let sawAnything = false;
    let nextIndex = 0;
    const indexOf = new Map<number, number>();
    try {
      for (;;) {
        signal?.throwIfAborted();
        const next = await nextEvent();
        if (next === null || next === "[DONE]") {
          if (!sawAnything || (next === null && finish === null)) {
            throw new ModelError("model_bad_response", "Workers AI: the stream ended before the answer finished");
          }
          if (usage) yield { type: "usage", usage };
          yield { type: "finish", reason: finish ?? (sawCalls ? "tool_calls" : "stop") };
          return;
        }
        const piece = pieceOf(streamedOutput(next));
        sawAnything = true;
        if (piece.text) yield { type: "text", text: piece.text };
        for (const call of piece.calls) {
          sawCalls = true;
          // An OpenAI fragment carries its index (later fragments of a call add to it); a whole call takes the next.
          const key = "index" in call && call.index !== undefined ? call.index : -1 - nextIndex;
          let index = indexOf.get(key);
          const first = index === undefined;
          if (index === undefined) {
            index = nextIndex++;
            indexOf.set(key, index);
          }
          const name = callName(call);
          yield {
            type: "tool_call",
            index,
            ...(first ? { id: ("id" in call && call.id) || callId(answerId, index) } : {}),
            ...(name ? { name } : {}),
            arguments: callArguments(call),
          };
        }
        finish = piece.finish ?? finish;
        usage = piece.usage ?? usage;
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      if (!ended) stop(signal?.reason);
    }
  }
  return events();
}

/** One event of the binding's stream, or a bad response. */
function streamedOutput(data: string): AiOutput {
  try {
    return answerOf(JSON.parse(data), true);
  } catch (error) {
    throw new ModelError(
      "model_bad_response",
      `Workers AI sent ${error instanceof SyntaxError ? "an event that is not JSON" : error instanceof Error ? error.message : "a broken event"}`,
    );
  }
}

// Workers AI (the AI binding) behind an OpenAI-compatible face: `workersAiFetch(ai, model)` answers
// POST /chat/completions as an OpenAI server would (a chat.completion, or chat.completion.chunk events with
// `stream: true`) by calling `ai.run(model, {messages, tools, stream, ...})`. The passthrough forwards to it
// and the loop reads it with the parser it reads every upstream with, so one mapping serves both.
//
// What the binding answers (Cloudflare's documented shapes, and the newer models' OpenAI ones):
// - plain: `{response, tool_calls?, usage?}`, tool calls as `{name, arguments: object}` (the older models) or
//   `{id, type: "function", function: {name, arguments: string}}`; some models answer a whole
//   `chat.completion` (`choices[0].message`) instead.
// - `stream: true`: a byte stream of server-sent events, `data: {"response":"..."}` pieces, a last one with
//   `usage`, `data: [DONE]`; tool calls as a `tool_calls` event, or OpenAI chunks (`choices[0].delta`).
// - a failure: `run` throws an Error whose message starts with Workers AI's numeric code ("3040: Capacity
//   temporarily exceeded..."); the code decides the status the face answers with.

import { createParser } from "eventsource-parser";
import { z } from "zod";
import {
  type CompletionBase,
  chatCompletion,
  chunkEvent,
  DONE_EVENT,
  type OpenAIToolCall,
  usageEvent,
} from "./openai-wire";

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

const Usage = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });
type Usage = z.infer<typeof Usage>;

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
  usage: Usage.nullish(),
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
  calls: (ToolCallOut & { position: number })[];
  finish: string | null;
  usage: Usage | null;
}

function pieceOf(output: AiOutput): Piece {
  const choice = output.choices?.[0];
  const part = choice?.message ?? choice?.delta;
  const response = output.response;
  const text =
    (typeof response === "string" ? response : response != null ? JSON.stringify(response) : "") +
    (part?.content ?? "");
  const calls = [...(output.tool_calls ?? []), ...(part?.tool_calls ?? [])].map((c, position) => ({
    ...c,
    position,
  }));
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

function openAIError(status: number, message: string, type: string, code: string): Response {
  return Response.json({ error: { message, type, code, param: null } }, { status });
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

function aiInputs(body: Record<string, unknown>, stream: boolean): Record<string, unknown> {
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

async function bodyText(init: RequestInit): Promise<string> {
  const body = init.body;
  if (typeof body === "string") return body;
  if (body === undefined || body === null) return "";
  return new Response(body).text();
}

/** The binding as an OpenAI base URL serving `model`: POST /chat/completions and GET /models. */
export function workersAiFetch(ai: WorkersAiBinding, model: string) {
  return async (path: string, init: RequestInit): Promise<Response> => {
    if (path === "/models" && (init.method ?? "GET") === "GET") {
      return Response.json({
        object: "list",
        data: [{ id: model, object: "model", created: 0, owned_by: "workers-ai" }],
      });
    }
    if (path !== "/chat/completions" || init.method !== "POST") {
      return openAIError(
        404,
        `This route runs on Workers AI, which serves only POST /v1/chat/completions here (not ${init.method ?? "GET"} /v1${path}).`,
        "invalid_request_error",
        "unsupported_endpoint",
      );
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(await bodyText(init));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      body = parsed as Record<string, unknown>;
    } catch {
      return openAIError(400, "The request body must be a JSON object.", "invalid_request_error", "invalid_json");
    }
    const stream = body.stream === true;
    const includeUsage =
      typeof body.stream_options === "object" &&
      body.stream_options !== null &&
      "include_usage" in body.stream_options &&
      body.stream_options.include_usage === true;
    let output: unknown;
    try {
      output = await raced(ai.run(model, aiInputs(body, stream)), init.signal);
    } catch (error) {
      if (init.signal?.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      const status = statusOfAiError(message);
      // The binding's words name no secret of ours; they are the operator's to read, as an upstream's body is.
      return openAIError(
        status,
        `Workers AI: ${message}`,
        status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error",
        `workers_ai_${status}`,
      );
    }
    const id = `chatcmpl-wai-${crypto.randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    if (output instanceof ReadableStream) {
      const events = streamedAnswer(output, { id, created, model }, includeUsage, init.signal);
      if (stream) {
        return new Response(events.pipeThrough(new TextEncoderStream()), {
          headers: { "content-type": "text/event-stream; charset=utf-8" },
        });
      }
      return badAnswer("a stream it was not asked for");
    }
    let answer: AiOutput;
    try {
      answer = answerOf(output, false);
    } catch (error) {
      return badAnswer(error instanceof Error ? error.message : "an answer that is not a text generation output");
    }
    const piece = pieceOf(answer);
    const toolCalls = wholeCalls(piece.calls, id);
    const finish = piece.finish ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
    const usage = piece.usage ?? undefined;
    if (!stream) {
      return Response.json(
        chatCompletion({ id, created, model }, { content: piece.text, toolCalls, finish, ...(usage ? { usage } : {}) }),
      );
    }
    // Asked to stream, answered whole: the whole answer as the chunks an OpenAI server would send.
    const base: CompletionBase = { id, created, model };
    const lines = [chunkEvent(base, { role: "assistant", content: piece.text })];
    if (toolCalls.length > 0)
      lines.push(chunkEvent(base, { tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }));
    lines.push(chunkEvent(base, {}, finish));
    if (includeUsage && usage) lines.push(usageEvent(base, usage));
    lines.push(DONE_EVENT);
    return new Response(lines.join(""), { headers: { "content-type": "text/event-stream; charset=utf-8" } });
  };
}

function badAnswer(what: string): Response {
  return openAIError(502, `Workers AI sent ${what}.`, "server_error", "workers_ai_bad_response");
}

/** Whole tool calls (a plain answer's), each with an id and its arguments as JSON text. */
function wholeCalls(calls: Piece["calls"], id: string): OpenAIToolCall[] {
  return calls.map((call, index) => ({
    id: ("id" in call && call.id) || `call_${id.slice(-12)}_${index}`,
    type: "function",
    function: { name: callName(call), arguments: callArguments(call) || "{}" },
  }));
}

/**
 * The binding's event stream as OpenAI chunks: text pieces as content deltas, tool calls (whole, or as OpenAI
 * fragments) as tool_calls deltas, then the finish, the usage when asked for, and [DONE]. Read as the reader
 * pulls; an abort of `signal` (a timeout, a client that left) or a cancelled reader cancels the binding's stream.
 * An event that is not an answer's (not JSON, an error event), or a stream that ends without [DONE] and without
 * a finish, errors the stream without its [DONE], so a reader sees it as cut short, never as a whole answer.
 */
function streamedAnswer(
  source: ReadableStream<Uint8Array>,
  base: CompletionBase,
  includeUsage: boolean,
  signal: AbortSignal | null | undefined,
): ReadableStream<string> {
  // Our own reader (not sseData's generator): cancelling it cancels the pipe and the binding's stream at once.
  const reader = source.pipeThrough(new TextDecoderStream()).getReader();
  const ready: string[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event.data) });
  let ended = false;
  /** The next event's data, or null when the stream has ended. */
  const nextEvent = async (): Promise<string | null> => {
    while (ready.length === 0) {
      if (ended) return null;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        parser.reset({ consume: true });
      } else parser.feed(value);
    }
    return ready.shift() ?? null;
  };
  let usage: Usage | null = null;
  let finish: string | null = null;
  let sawCalls = false;
  let sawAnything = false;
  let nextIndex = 0;
  let started = false;
  const indexOf = new Map<number, number>();
  const stop = (reason: unknown) => {
    reader.cancel(reason).catch(() => {});
  };
  let onAbort: (() => void) | null = null;

  /** The chunks one event of the binding stands for. */
  function chunksOf(output: AiOutput): string[] {
    const out: string[] = [];
    const piece = pieceOf(output);
    if (piece.text) out.push(chunkEvent(base, { content: piece.text }));
    for (const call of piece.calls) {
      sawCalls = true;
      // An OpenAI fragment carries its index (later fragments of a call add to it); a whole call takes the next one.
      const key = "index" in call && call.index !== undefined ? call.index : -1 - nextIndex;
      let index = indexOf.get(key);
      const first = index === undefined;
      if (index === undefined) {
        index = nextIndex++;
        indexOf.set(key, index);
      }
      const name = callName(call);
      out.push(
        chunkEvent(base, {
          tool_calls: [
            {
              index,
              ...(first
                ? { id: ("id" in call && call.id) || `call_${base.id.slice(-12)}_${index}`, type: "function" }
                : {}),
              function: { ...(name ? { name } : {}), arguments: callArguments(call) },
            },
          ],
        }),
      );
    }
    finish = piece.finish ?? finish;
    usage = piece.usage ?? usage;
    return out;
  }

  return new ReadableStream<string>({
    start(controller) {
      if (!signal) return;
      onAbort = () => {
        controller.error(signal.reason);
        stop(signal.reason);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      const detach = () => {
        if (onAbort) signal?.removeEventListener("abort", onAbort);
      };
      try {
        if (!started) {
          started = true;
          controller.enqueue(chunkEvent(base, { role: "assistant", content: "" }));
          return;
        }
        for (;;) {
          const next = await nextEvent();
          if (signal?.aborted) return;
          if (next === null || next === "[DONE]") {
            if (!sawAnything || (next === null && finish === null)) {
              throw new Error("the stream ended before the answer finished");
            }
            controller.enqueue(chunkEvent(base, {}, finish ?? (sawCalls ? "tool_calls" : "stop")));
            if (includeUsage && usage) controller.enqueue(usageEvent(base, usage));
            controller.enqueue(DONE_EVENT);
            controller.close();
            detach();
            return;
          }
          const output = answerOf(JSON.parse(next), true);
          sawAnything = true;
          const out = chunksOf(output);
          for (const line of out) controller.enqueue(line);
          if (out.length > 0) return;
        }
      } catch (error) {
        detach();
        controller.error(error);
        stop(error);
      }
    },
    cancel(reason) {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      stop(reason);
    },
  });
}

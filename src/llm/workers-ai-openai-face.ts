// Workers AI behind an OpenAI-compatible face, for the passthrough: `workersAiFetch(ai, model)` answers
// POST /chat/completions as an OpenAI server would (a chat.completion, or chat.completion.chunk events with
// `stream: true`) and GET /models, written with the wire's builders (src/wire/openai.ts) from the model events the binding
// yields (workers-ai.ts), the same events the loop's model folds.

import { z } from "zod";
import {
  type CompletionBase,
  chatCompletion,
  chunkEvent,
  DONE_EVENT,
  type OpenAIToolCall,
  openAIUsage,
  usageEvent,
} from "../wire/openai";
import type { TokenUsage } from "../wire/turn";
import type { ChatResponse } from "./chat-model";
import { type ModelEvent, responseOf } from "./model-events";
import { aiInputs, runWorkersAi, type WorkersAiAnswer, type WorkersAiBinding, WorkersAiError } from "./workers-ai";

function openAIError(status: number, message: string, type: string, code: string): Response {
  return Response.json({ error: { message, type, code, param: null } }, { status });
}

async function bodyText(init: RequestInit): Promise<string> {
  const body = init.body;
  if (typeof body === "string") return body;
  if (body === undefined || body === null) return "";
  return new Response(body).text();
}

function toolCallsJson(response: ChatResponse): OpenAIToolCall[] {
  return response.toolCalls.map((call) => ({
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
}

const EVENT_STREAM = { "content-type": "text/event-stream; charset=utf-8" };

/** The binding as an OpenAI base URL serving `model`: POST /chat/completions and GET /models. */
/** A request body: any JSON object (the binding takes what the client sent). */
const JsonObject = z.record(z.string(), z.unknown());

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
    let parsed: unknown;
    try {
      parsed = JSON.parse(await bodyText(init));
    } catch {
      parsed = undefined;
    }
    const read = JsonObject.safeParse(parsed);
    if (!read.success) {
      return openAIError(400, "The request body must be a JSON object.", "invalid_request_error", "invalid_json");
    }
    const body = read.data;
    const stream = body.stream === true;
    const includeUsage =
      typeof body.stream_options === "object" &&
      body.stream_options !== null &&
      "include_usage" in body.stream_options &&
      body.stream_options.include_usage === true;
    // The caller's signal (a timeout, a client that left) stops the binding, and so does a reader that cancels.
    const halt = new AbortController();
    const onAbort = () => halt.abort(init.signal?.reason);
    if (init.signal?.aborted) onAbort();
    else init.signal?.addEventListener("abort", onAbort, { once: true });
    const release = () => init.signal?.removeEventListener("abort", onAbort);
    let answer: WorkersAiAnswer;
    try {
      answer = await runWorkersAi(ai, model, aiInputs(body, stream), halt.signal);
    } catch (error) {
      release();
      if (!(error instanceof WorkersAiError)) throw error;
      const { status } = error;
      const type = status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
      return openAIError(status, error.detail, type, error.openAICode);
    }
    const base: CompletionBase = { id: answer.id, created: Math.floor(Date.now() / 1000), model };
    if (answer.streamed) {
      const events = streamedAnswer(answer.events, base, includeUsage, { halt, release });
      return new Response(events.pipeThrough(new TextEncoderStream()), { headers: EVENT_STREAM });
    }
    release();
    const whole = await responseOf(answer.events);
    const toolCalls = toolCallsJson(whole);
    const finish = whole.finishReason ?? "stop";
    const usage = whole.usage ? openAIUsage(whole.usage) : undefined;
    if (!stream) {
      return Response.json(
        chatCompletion(base, { content: whole.content ?? "", toolCalls, finish, ...(usage ? { usage } : {}) }),
      );
    }
    // Asked to stream, answered whole: the whole answer as the chunks an OpenAI server would send.
    const lines = [chunkEvent(base, { role: "assistant", content: whole.content ?? "" })];
    if (toolCalls.length > 0) {
      lines.push(chunkEvent(base, { tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }));
    }
    lines.push(chunkEvent(base, {}, finish));
    if (includeUsage && usage) lines.push(usageEvent(base, usage));
    lines.push(DONE_EVENT);
    return new Response(lines.join(""), { headers: EVENT_STREAM });
  };
}

/** The chunk one event of a streamed answer is written as; null for what is written at its end (usage, finish). */
function chunkOf(base: CompletionBase, event: ModelEvent): string | null {
  if (event.type === "text") return chunkEvent(base, { content: event.text });
  if (event.type !== "tool_call") return null;
  const { index, id, name } = event;
  return chunkEvent(base, {
    tool_calls: [
      {
        index,
        // A call's first fragment carries its id; later ones add to its name and arguments.
        ...(id ? { id, type: "function" } : {}),
        function: { ...(name ? { name } : {}), arguments: event.arguments },
      },
    ],
  });
}

/**
 * A streamed answer as OpenAI chunks: a first chunk with the role, then a chunk for each piece of text and
 * each tool call fragment as the binding sends it, then the finish, the usage when asked for, and [DONE]. Read
 * as the reader pulls; a reader that cancels stops the binding (`halt`). A broken answer (the events throw)
 * errors the stream without its [DONE], so a reader sees it as cut short, never as a whole answer.
 */
function streamedAnswer(
  events: AsyncIterable<ModelEvent>,
  base: CompletionBase,
  includeUsage: boolean,
  stop: { halt: AbortController; release: () => void },
): ReadableStream<string> {
  const iterator = events[Symbol.asyncIterator]();
  let started = false;
  let finish = "stop";
  let usage: TokenUsage | null = null;
  return new ReadableStream<string>({
    async pull(controller) {
      try {
        if (!started) {
          started = true;
          controller.enqueue(chunkEvent(base, { role: "assistant", content: "" }));
          return;
        }
        for (;;) {
          const next = await iterator.next();
          if (next.done) {
            controller.enqueue(chunkEvent(base, {}, finish));
            if (includeUsage && usage) controller.enqueue(usageEvent(base, openAIUsage(usage)));
            controller.enqueue(DONE_EVENT);
            controller.close();
            stop.release();
            return;
          }
          const event = next.value;
          if (event.type === "finish") finish = event.reason;
          if (event.type === "usage") usage = event.usage;
          const chunk = chunkOf(base, event);
          if (chunk !== null) {
            controller.enqueue(chunk);
            return;
          }
        }
      } catch (error) {
        stop.release();
        controller.error(error);
        stop.halt.abort(error);
      }
    },
    cancel(reason) {
      stop.release();
      stop.halt.abort(reason);
    },
  });
}

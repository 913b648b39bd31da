// An `anthropic` route's answer for a client of chat completions (issue 28): the JSON message as a chat completion,
// the relayed Messages event stream as chat completion chunks ending with `[DONE]` (the usage chunk only when the
// client asked for it), an error answer in Anthropic's shape as OpenAI's. docs/anthropic.md has the tables.

import type { ContentfulStatusCode } from "hono/utils/http-status";
import { errorBody } from "../errors";
import { classifyUpstreamError, upstreamWords } from "../llm/upstream-error";
import { MessageEventsToChatChunks, STREAM_CUT_MESSAGE } from "../translate/anthropic-chat-stream";
import { anthropicErrorToOpenAI } from "../translate/anthropic-to-chat";
import { messageToChatResponse } from "../translate/chat-to-anthropic";
import { AnthropicErrorBody, AnthropicMessage, MessageStreamEvent } from "../wire/anthropic";
import { isEventStream, unreadable } from "./answer-as-message";
import type { PassthroughRequest } from "./request-body";
import { translateEventStream } from "./sse-translate";

const CHAT_COMPLETIONS = "chat completions";
const encoder = new TextEncoder();
const DONE = encoder.encode("data: [DONE]\n\n");
const KEEPALIVE = encoder.encode(": keepalive\n\n");
const dataFrame = (value: unknown) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`);
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** An Anthropic answer (JSON, the relayed event stream, or an error) as chat completions answers it. */
export async function messageAnswerAsChat(answer: Response, request: PassthroughRequest): Promise<Response> {
  if (!answer.ok) return await anthropicErrorAsOpenAI(answer);
  const headers = new Headers(answer.headers);
  if (request.stream) {
    if (!isEventStream(answer) || !answer.body) {
      await answer.body?.cancel();
      throw unreadable(answer, "it answered a stream request without an event stream.", CHAT_COMPLETIONS);
    }
    return new Response(chatChunkStream(answer.body, request.includeUsage), { status: 200, headers });
  }
  let value: unknown = null;
  try {
    value = await answer.json();
  } catch {
    throw unreadable(answer, "it is not JSON.", CHAT_COMPLETIONS);
  }
  const message = AnthropicMessage.safeParse(value);
  if (!message.success) throw unreadable(answer, "it is not a Messages API message.", CHAT_COMPLETIONS);
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(messageToChatResponse(message.data, nowSeconds())), { status: 200, headers });
}

/** Causes OpenAI answers with a code of its own: an Anthropic error that stands for one takes OpenAI's code. */
const OPENAI_CODES: ReadonlySet<string> = new Set(["context_length_exceeded", "model_not_found"]);

/** Anthropic's error body as our OpenAI-shaped one (529 answered 503); any other error answer is left as it is. */
async function anthropicErrorAsOpenAI(answer: Response): Promise<Response> {
  const text = await answer.text();
  let value: unknown = null;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: left as it is.
  }
  const body = AnthropicErrorBody.safeParse(value);
  const headers = new Headers(answer.headers);
  headers.delete("content-length");
  if (!body.success) return new Response(text, { status: answer.status, headers });
  const translated = anthropicErrorToOpenAI(answer.status, body.data);
  // The causes OpenAI names with a code of its own (a prompt too long, a model not found) get OpenAI's code.
  const cause = classifyUpstreamError(answer.status, upstreamWords(body.data));
  if (OPENAI_CODES.has(cause)) translated.body.error.code = cause;
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify(translated.body), {
    status: translated.status as ContentfulStatusCode,
    headers,
  });
}

/**
 * The relay's body (Anthropic's events, `ping` keepalives, an `error` event when it failed) as chat completion
 * chunks: a `ping` becomes a keepalive comment, `message_stop` ends the stream with `[DONE]`, an `error` event
 * becomes an error frame and ends it; a stream that ends before `message_stop` ends with an error frame too.
 */
export function chatChunkStream(events: ReadableStream<Uint8Array>, includeUsage: boolean): ReadableStream<Uint8Array> {
  const chunks = new MessageEventsToChatChunks({ created: nowSeconds(), includeUsage });
  let ended = false;
  return translateEventStream(events, {
    event: (event) => {
      if (ended) return [];
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        // Not JSON: no event to translate. A stream that never stops ends with an error frame (end).
        return [];
      }
      const parsed = MessageStreamEvent.safeParse(value);
      if (!parsed.success) return [];
      if (parsed.data.type === "ping") return [KEEPALIVE];
      const out = chunks.push(parsed.data).map(dataFrame);
      if (parsed.data.type === "message_stop") out.push(DONE);
      if (parsed.data.type === "message_stop" || parsed.data.type === "error") ended = true;
      return out;
    },
    comment: () => [KEEPALIVE],
    end: () => (ended ? [] : [dataFrame(errorBody("upstream_stream_failed", STREAM_CUT_MESSAGE))]),
  });
}

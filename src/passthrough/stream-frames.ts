// What the relay itself writes into an event stream, in the wire of the upstream it relays: on OpenAI's, a
// `: keepalive` comment and a `data: {"error":...}` frame; on Anthropic's Messages API, a `ping` event and an
// `error` event (`{"type":"error","error":{type,message}}`), as Anthropic's own streams carry them.
import { z } from "zod";
import type { OpenAIErrorBody } from "../errors";
import { openAIErrorToAnthropic } from "../translate/anthropic-to-chat";
import { AnthropicErrorBody } from "../wire/anthropic";
import type { Wire } from "./request-body";
import { errorFrame } from "./upstream-errors";

export interface StreamFrames {
  keepalive: Uint8Array;
  /** An error frame for `body` (our OpenAI-shaped error, or an upstream's error text as it sent it) and its status. */
  error(body: OpenAIErrorBody | string, status: number): Uint8Array;
}

const encoder = new TextEncoder();

const openAIFrames: StreamFrames = {
  keepalive: encoder.encode(": keepalive\n\n"),
  error: (body) => errorFrame(body),
};

/** An OpenAI error body as the relay reads it (an upstream's may lack `type`, `code` or `param`). */
const OpenAIError = z.looseObject({
  error: z.looseObject({ message: z.string(), param: z.string().nullish().catch(null) }),
});

/** `body` in Anthropic's shape: as it is when it has that shape, else translated by its status. */
function anthropicError(body: OpenAIErrorBody | string, status: number): AnthropicErrorBody {
  let value: unknown = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      value = null;
    }
  }
  const own = AnthropicErrorBody.safeParse(value);
  if (own.success) return own.data;
  const openAI = OpenAIError.safeParse(value);
  const { message, param } = openAI.success ? openAI.data.error : { message: "The upstream LLM failed.", param: null };
  return openAIErrorToAnthropic(status, {
    error: { message, type: "upstream_error", code: null, param: param ?? null },
  });
}

const anthropicFrames: StreamFrames = {
  keepalive: encoder.encode('event: ping\ndata: {"type":"ping"}\n\n'),
  error: (body, status) => encoder.encode(`event: error\ndata: ${JSON.stringify(anthropicError(body, status))}\n\n`),
};

export function streamFramesOf(wire: Wire): StreamFrames {
  return wire === "anthropic" ? anthropicFrames : openAIFrames;
}

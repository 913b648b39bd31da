// The little a passthrough must know about a client's body: a JSON object, its `model`, whether it
// streams. The bytes themselves go upstream untouched, so nothing here may rewrite them.

import { z } from "zod";
import { ApiError } from "../errors";
import { parseWith } from "../http";
import type { MessagesRequest } from "../wire/anthropic";

// Loose: every other field (messages, tools, tool_choice, stream_options, response_format, unknown
// ones) is the upstream's business; the parsed copy is only read, never re-serialised.
const PassthroughBody = z.looseObject({
  model: z.string({
    error: (issue) => (issue.input === undefined ? "you must provide a model parameter" : "must be a string"),
  }),
  stream: z.boolean({ error: "must be true or false" }).nullish(),
  // What the meter reads (never rewritten from this copy): how much the answer may take, whether usage was asked for.
  max_tokens: z.number().int().positive().nullish().catch(null),
  max_completion_tokens: z.number().int().positive().nullish().catch(null),
  max_output_tokens: z.number().int().positive().nullish().catch(null),
  stream_options: z
    .looseObject({ include_usage: z.boolean().nullish().catch(null) })
    .nullish()
    .catch(null),
});

/** The two wires: OpenAI's (chat completions and the rest of /v1) and Anthropic's Messages API. */
export type Wire = "openai" | "anthropic";

export interface PassthroughRequest {
  /** Exactly the bytes the client sent. */
  bytes: ArrayBuffer;
  /** The wire the client speaks (its bytes are in it); an answer from a route of the other wire is translated back. */
  wire: Wire;
  model: string;
  stream: boolean;
  /** The most the answer may take, when the client said (max_tokens, max_completion_tokens, max_output_tokens). */
  maxTokens: number | null;
  /** The client asked a stream for its usage (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** A Messages request as its route already read it, so a crossing to chat completions does not parse it again. */
  messages?: MessagesRequest;
}

const decoder = new TextDecoder();

/** The body as a JSON object, or `invalid_json`. */
export function jsonObjectOf(bytes: ArrayBuffer): object {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ApiError("invalid_json", "The request body must be a JSON object.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError("invalid_json", "The request body must be a JSON object.");
  }
  return value;
}

export function parsePassthroughBody(bytes: ArrayBuffer): PassthroughRequest {
  const value = jsonObjectOf(bytes);
  const body = parseWith(PassthroughBody, value, "request body");
  return {
    bytes,
    wire: "openai",
    model: body.model,
    stream: body.stream === true,
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens ?? null,
    includeUsage: body.stream_options?.include_usage === true,
  };
}

// The little a passthrough must know about a client's body: a JSON object, its `model`, whether it
// streams. The bytes themselves go upstream untouched, so nothing here may rewrite them.
import { z } from "zod";
import { ApiError } from "../errors";
import { parseWith } from "../http";

// Loose: every other field (messages, tools, tool_choice, stream_options, response_format, unknown
// ones) is the upstream's business; the parsed copy is only read, never re-serialised.
const PassthroughBody = z.looseObject({
  model: z.string({
    error: (issue) => (issue.input === undefined ? "you must provide a model parameter" : "must be a string"),
  }),
  stream: z.boolean({ error: "must be true or false" }).nullish(),
});

export interface PassthroughRequest {
  /** Exactly the bytes the client sent. */
  bytes: ArrayBuffer;
  model: string;
  stream: boolean;
}

const decoder = new TextDecoder();

export function parsePassthroughBody(bytes: ArrayBuffer): PassthroughRequest {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ApiError("invalid_json", "The request body must be a JSON object.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError("invalid_json", "The request body must be a JSON object.");
  }
  const body = parseWith(PassthroughBody, value, "request body");
  return { bytes, model: body.model, stream: body.stream === true };
}

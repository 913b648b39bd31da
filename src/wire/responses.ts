// OpenAI's Responses API wire, the subset the agent takes: the request (read with zod, an input item or tool of a
// kind the agent cannot take refused naming its param), and the response object and stream events aptix writes
// (field names as the official `openai` SDK's types spell them).
import { z } from "zod";
import { quoted } from "../quote";

// ---------------------------------------------------------------------------------------------------------------
// Requests.

/** The type of a discriminated item that matched none of the kinds taken, for the refusal's words. */
function typeOf(input: unknown): string {
  if (typeof input === "object" && input !== null && "type" in input) return String(input.type);
  return "";
}

const unsupported =
  (what: string, taken: string) =>
  (issue: { code?: string; input?: unknown }): string | undefined =>
    issue.code === "invalid_union"
      ? `${what} of type ${quoted(typeOf(issue.input))} is not supported (${taken})`
      : undefined;

/** A content part of an input message: text, an image (refused later: the agent reads text), or an answer's text. */
export const ResponsesInputPart = z.discriminatedUnion(
  "type",
  [
    z.looseObject({ type: z.literal("input_text"), text: z.string() }),
    z.looseObject({ type: z.literal("output_text"), text: z.string() }),
    z.looseObject({ type: z.literal("input_image") }),
  ],
  { error: unsupported("a content part", "the agent reads input_text and output_text") },
);
export type ResponsesInputPart = z.infer<typeof ResponsesInputPart>;

/**
 * A string or parts; a string is read as one text part, so a bad part is named by its own path (a union of the
 * two would name only the whole field).
 */
const content = z.preprocess(
  (value) => (typeof value === "string" ? [{ type: "input_text", text: value }] : value),
  z.array(ResponsesInputPart, { error: "must be a string or an array of content parts" }),
);

/** A message: `type` may be left out (the SDK's EasyInputMessage). */
export const ResponsesMessageItem = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content,
});

/** A call the model made earlier, as the client sends it back. */
export const ResponsesFunctionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

/** The client's result for a call. */
export const ResponsesFunctionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: content,
});

/** An input item: a message, a function call, a function call's output; other kinds refused naming `input.N`. */
export const ResponsesInputItem = z.discriminatedUnion(
  "type",
  [
    // A message without `type` is matched by its missing discriminator, as the SDK writes it.
    ResponsesMessageItem,
    ResponsesFunctionCallItem,
    ResponsesFunctionCallOutputItem,
  ],
  { error: unsupported("an input item", "the agent takes message, function_call and function_call_output items") },
);
export type ResponsesInputItem = z.infer<typeof ResponsesInputItem>;

/** A function tool, flat as the Responses API declares it. */
export const ResponsesFunctionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string().min(1),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});
export type ResponsesFunctionTool = z.infer<typeof ResponsesFunctionTool>;

/** Tools: functions only; OpenAI's hosted tools (web_search, file_search, computer_use...) are refused. */
export const ResponsesTool = z.discriminatedUnion("type", [ResponsesFunctionTool], {
  error: unsupported("a tool", "the agent takes tools of type function; OpenAI's hosted tools are not available here"),
});

/** none, auto, required, or one function by name; other choices are refused by the translation, naming it. */
export const ResponsesToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.string(), name: z.string().optional() }),
]);
export type ResponsesToolChoice = z.infer<typeof ResponsesToolChoice>;

/**
 * A Responses request. The fields the agent reads are declared; others pass as on the chat completions door, and
 * the translation refuses those that would change the answer if they were dropped (conversation, prompt,
 * background, a structured text format...).
 */
export const ResponsesRequest = z.looseObject({
  model: z.string().min(1),
  /** A string is one user message (read so, a bad item is named by its own path, `input.N...`). */
  input: z.preprocess(
    (value) => (typeof value === "string" ? [{ type: "message", role: "user", content: value }] : value),
    z.array(ResponsesInputItem, { error: "must be a string or an array of input items" }),
  ),
  instructions: z.string().nullable().optional(),
  tools: z.array(ResponsesTool).nullable().optional(),
  tool_choice: ResponsesToolChoice.nullable().optional(),
  previous_response_id: z.string().min(1).nullable().optional(),
  store: z.boolean().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().nullable().optional(),
  top_p: z.number().nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  user: z.string().optional(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

// ---------------------------------------------------------------------------------------------------------------
// Answers: the response object and its stream's events, as aptix writes them.

export interface ResponsesOutputText {
  type: "output_text";
  text: string;
  annotations: never[];
  logprobs: never[];
}

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export interface ResponsesOutputMessage {
  type: "message";
  id: string;
  role: "assistant";
  status: ItemStatus;
  content: ResponsesOutputText[];
}

export interface ResponsesFunctionCall {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export type ResponsesOutputItem = ResponsesOutputMessage | ResponsesFunctionCall;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

/** The tool choice a response echoes, in the Responses API's spelling. */
export type EchoedToolChoice = "none" | "auto" | "required" | { type: "function"; name: string };

/** What a response repeats of its request. */
export interface ResponseEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  store: boolean;
  temperature: number | null;
  tool_choice: EchoedToolChoice;
  tools: ResponsesFunctionTool[];
  top_p: number | null;
  user?: string;
}

/**
 * A response object. `output_text` is not on the wire: the SDK computes it from the output (as it does for
 * OpenAI's own answers).
 */
export interface ResponseObject extends ResponseEcho {
  id: string;
  object: "response";
  created_at: number;
  model: string;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" | "content_filter" } | null;
  output: ResponsesOutputItem[];
  text: { format: { type: "text" } };
  truncation: "disabled";
  usage: ResponsesUsage | null;
}

/** Every stream event carries its place in the stream. */
interface Sequenced {
  sequence_number: number;
}

export type ResponsesStreamEvent = Sequenced &
  (
    | { type: "response.created" | "response.in_progress"; response: ResponseObject }
    | { type: "response.completed" | "response.incomplete" | "response.failed"; response: ResponseObject }
    | {
        type: "response.output_item.added" | "response.output_item.done";
        output_index: number;
        item: ResponsesOutputItem;
      }
    | {
        type: "response.content_part.added" | "response.content_part.done";
        output_index: number;
        item_id: string;
        content_index: number;
        part: ResponsesOutputText;
      }
    | {
        type: "response.output_text.delta";
        output_index: number;
        item_id: string;
        content_index: number;
        delta: string;
        logprobs: never[];
      }
    | {
        type: "response.output_text.done";
        output_index: number;
        item_id: string;
        content_index: number;
        text: string;
        logprobs: never[];
      }
    | { type: "response.function_call_arguments.delta"; output_index: number; item_id: string; delta: string }
    | {
        type: "response.function_call_arguments.done";
        output_index: number;
        item_id: string;
        name: string;
        arguments: string;
      }
  );

/** An event as the Responses stream sends it over SSE: the type as the event name, the event as its data. */
export function responsesEventSse(event: ResponsesStreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

// The scripted upstream's script language, shared by the Node server and the tests in workerd.

/** One tool call the scripted model makes; `arguments` is the raw JSON text it streams in fragments. */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string;
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** As OpenAI reports it: of `prompt_tokens`, those read from the prompt cache. */
  prompt_tokens_details?: { cached_tokens: number };
}

interface Timing {
  /** Wait this long before the first byte of the answer. */
  delayFirstByteMs?: number;
}

export type ScriptStep =
  /** A chat completion: JSON, or an SSE stream when the request says `stream: true`. */
  | (Timing & {
      type: "completion";
      /** The completion's id (and a fixed `created`): two answers of the same step are then the same bytes. */
      id?: string;
      content?: string | null;
      toolCalls?: ScriptedToolCall[];
      finishReason?: string;
      usage?: ScriptedUsage;
      /** Characters per streamed content or argument fragment (default 8). */
      chunkSize?: number;
      /** Wait between streamed chunks. */
      chunkDelayMs?: number;
    })
  /**
   * A model that echoes its whole input at length: the text of every message, repeated and cut to the request's
   * `max_tokens` (at the script's characters a token) when it names one, and then `finish_reason: "length"`, as a
   * real model stops there; without `max_tokens`, the input once. Its usage is counted faithfully.
   */
  | (Timing & { type: "echo" })
  /** An error answer: `body` is sent as JSON unless it is a string. */
  | (Timing & { type: "error"; status: number; body: unknown; headers?: Record<string, string> })
  /** Any JSON answer (models, embeddings, responses, completions). */
  | (Timing & { type: "json"; status?: number; body: unknown; headers?: Record<string, string> })
  /** Raw SSE lines, then: close cleanly, destroy the socket mid-stream, or stall forever. */
  | (Timing & {
      type: "sse";
      events: string[];
      eventDelayMs?: number;
      /** Raw text written after the events (half an event, say), before the end. */
      tail?: string;
      end: "close" | "destroy" | "stall";
    })
  /** Never answers. */
  | { type: "hang" };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Wall-clock ms (performance.timeOrigin + performance.now()) when the whole request had arrived. */
  receivedAt?: number;
  /** Wall-clock ms (performance.timeOrigin + performance.now()) when the answer's first body byte was written. */
  firstByteAt?: number;
  /** The connection closed before the answer ended: the caller aborted it (or a scripted `destroy`). */
  disconnected?: boolean;
}

export interface ScriptOptions {
  /** Answer every request after the steps run out with the last step again (benchmarks). */
  repeat?: boolean;
  /** Keep each request for `requests()` (default true; benchmarks turn it off). */
  record?: boolean;
  /**
   * Count usage faithfully at this many characters a token, as a tokenizer would: prompt tokens from the JSON text of
   * the request's messages (and tools, and system on the Messages API), completion tokens from the answer's text. The
   * OpenAI-compatible upstream otherwise reports a fixed usage; the Anthropic one counts at 4. Also what Anthropic's
   * count_tokens answers.
   */
  charsPerToken?: number;
  /**
   * OpenAI-compatible upstream: a completion without its own `usage` reports usage measured from the request (a
   * quarter of its prompt's characters) with `prompt_tokens_details.cached_tokens` from the prompt cache, as
   * OpenAI does (openai-prompt-cache.ts); without it, a fixed usage (11 prompt, 7 completion tokens).
   */
  measureUsage?: boolean;
  /**
   * The models this upstream has: a request naming another is answered as the provider answers it (OpenAI's 404
   * `model_not_found`, Anthropic's 404 `not_found_error`), no step used. Default: any model is accepted.
   */
  models?: string[];
  /**
   * The model's context in tokens (counted at `charsPerToken`, default 4, as estimateTokens counts them): a longer
   * request is answered as the provider answers it (OpenAI's 400 `context_length_exceeded`, Anthropic's 400
   * "prompt is too long"), no step used. OpenAI also refuses a prompt plus the answer's limit (`max_tokens` or
   * `max_completion_tokens`) beyond it. Default: no limit.
   */
  contextTokens?: number;
  /**
   * OpenAI-compatible upstream: refuse a request that sends `max_tokens` as OpenAI's reasoning models (o-series,
   * gpt-5) do (400 `unsupported_parameter`); they take only `max_completion_tokens`. No step used.
   */
  refuseMaxTokens?: boolean;
}

/** A deterministic token count: the characters of the JSON text at `charsPerToken` (4 by default), at least 1. */
export function estimateTokens(value: unknown, charsPerToken = 4): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return Math.max(1, Math.ceil(text.length / charsPerToken));
}

// The providers' own error bodies, word for word as they send them (for the servers and for scripted error steps).

/** OpenAI's 404 for a model it does not have (chat completions words it with backquotes). */
export function openAIModelNotFound(model: string) {
  return {
    error: {
      message: `The model \`${model}\` does not exist or you do not have access to it.`,
      type: "invalid_request_error",
      param: null,
      code: "model_not_found",
    },
  };
}

/**
 * OpenAI's 400 for messages longer than the model's context; with `completion` (the request's `max_tokens` or
 * `max_completion_tokens`), for messages and the answer's limit together beyond it.
 */
export function openAIContextLengthExceeded(limit: number, tokens: number, completion?: number) {
  return {
    error: {
      message:
        completion === undefined
          ? `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`
          : `This model's maximum context length is ${limit} tokens. However, you requested ${tokens + completion} tokens (${tokens} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  };
}

/** OpenAI's 400 from a reasoning model (o-series, gpt-5) for `max_tokens`, which it does not take. */
export function openAIUnsupportedMaxTokens() {
  return {
    error: {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: "invalid_request_error",
      param: "max_tokens",
      code: "unsupported_parameter",
    },
  };
}

/** Anthropic's 404 error for a model it does not have (`{"type":"error","error":{...}}` around it). */
export function anthropicModelNotFound(model: string): AnthropicScriptedError {
  return { type: "not_found_error", message: `model: ${model}` };
}

/** Anthropic's 400 error for a prompt longer than the model's context. */
export function anthropicPromptTooLong(tokens: number, limit: number): AnthropicScriptedError {
  return { type: "invalid_request_error", message: `prompt is too long: ${tokens} tokens > ${limit} maximum` };
}

/** Anthropic's 400 error for a prompt and `max_tokens` together beyond the model's context. */
export function anthropicContextExceeded(tokens: number, maxTokens: number, limit: number): AnthropicScriptedError {
  return {
    type: "invalid_request_error",
    message: `input length and \`max_tokens\` exceed context limit: ${tokens} + ${maxTokens} > ${limit}, decrease input length or \`max_tokens\` and try again`,
  };
}

export interface CreatedScript {
  id: string;
  /** Put this anywhere in a request body (a message, the model name) to have the script answer it. */
  marker: string;
}

export function scriptMarker(id: string): string {
  return `[[script:${id}]]`;
}

/** Every marker in a text (global: use with matchAll). */
export const SCRIPT_MARKER_PATTERN = /\[\[script:([a-z0-9-]+)\]\]/g;

// The scripted Anthropic upstream (scripted-anthropic.ts) reads the same markers and keeps the same records; its
// steps answer in the Messages API's shapes.

/** A text block of the scripted message. */
export interface AnthropicScriptedText {
  type: "text";
  text: string;
}

/** A tool_use block; `input` is streamed as `input_json_delta` fragments of its JSON text. */
export interface AnthropicScriptedToolUse {
  type: "tool_use";
  /** Default `toolu_scripted_<seq>_<index>`. */
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

/** The error types the Messages API names in `error.type`. */
export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export interface AnthropicScriptedError {
  type: AnthropicErrorType;
  message: string;
}

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn" | "refusal";

export type AnthropicScriptStep =
  /** A message: JSON, or the Messages event stream when the request says `stream: true`. */
  | (Timing & {
      type: "message";
      /** The message id (default `msg_scripted_<seq>`). */
      id?: string;
      content: (AnthropicScriptedText | AnthropicScriptedToolUse)[];
      /** Default `tool_use` when a tool_use block is there, else `end_turn`. */
      stopReason?: AnthropicStopReason;
      stopSequence?: string | null;
      /** Default: input a quarter of the request's characters, output a quarter of the answer's. */
      usage?: { input_tokens: number; output_tokens: number };
      /** Characters per text_delta or input_json_delta fragment (default 8). */
      chunkSize?: number;
      /** Wait between streamed events. */
      chunkDelayMs?: number;
      /**
       * Streamed only: after `afterEvents` events (default: every content event, before message_delta), an
       * `event: error` with this error, and the stream ends. A JSON answer ignores it.
       */
      streamError?: AnthropicScriptedError & { afterEvents?: number };
    })
  /** An error answer in the Messages API's shape, with a `request-id` header (and `retry-after` when given). */
  | (Timing & {
      type: "error";
      status: number;
      error: AnthropicScriptedError;
      /** Seconds, sent as the `retry-after` header. */
      retryAfter?: number;
      headers?: Record<string, string>;
    })
  | Extract<ScriptStep, { type: "json" | "sse" | "hang" }>;

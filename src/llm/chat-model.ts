// ChatModel: the one narrow interface the agent loop uses to reach a model.
import type { ChatMessage, ChatTool } from "../wire/openai";
import type { TokenUsage } from "../wire/turn";

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Offered tools, for models with native function calling. */
  tools?: ChatTool[];
  signal?: AbortSignal;
  /** Receives the answer's text as it streams, when the model streams. */
  onTextDelta?: (text: string) => void;
  /** Told once, when the first piece of the answer (text, a tool call, anything) arrives: time to first token. */
  onFirstChunk?: () => void;
  /**
   * The most the answer may take, sent as the provider's `max_tokens` (or, on an OpenAI-compatible route that says
   * so, `max_completion_tokens`); absent: the provider's default.
   */
  maxTokens?: number;
  /**
   * false: mark nothing for the provider's prompt cache. A compaction's transcript is never sent again, so writing
   * it to Anthropic's cache would pay the cache-write price for nothing.
   */
  promptCache?: false;
  /** Retries of a failed call in place (the model's own default when absent; 0 when a router has another route). */
  maxRetries?: number;
}

export interface ChatResponse {
  content: string | null;
  toolCalls: ModelToolCall[];
  finishReason: string | null;
  usage?: TokenUsage;
}

export interface ChatModel {
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
  /** The request's input tokens as the provider counts them (Anthropic's count_tokens); null when it could not. */
  countTokens?(request: ChatRequest): Promise<number | null>;
}

/** Why a model call failed, one code a cause (docs/errors.md); the user sees the text of its code. */
export type ModelErrorCode =
  | "model_auth_failed"
  | "model_not_found"
  | "context_length_exceeded"
  | "content_filtered"
  | "model_bad_request"
  | "model_rate_limited"
  | "model_unavailable"
  | "model_bad_response"
  | "model_timeout";

const MODEL_ERROR_MESSAGES: Record<ModelErrorCode, string> = {
  model_auth_failed: "The model service refused this server's credentials; the operator must check its API key.",
  model_not_found:
    "The model service does not know the model this route names; the operator must set the route's model to one the service lists.",
  context_length_exceeded:
    "The conversation is too long for the model's context; start a new session, or shorten the message.",
  content_filtered:
    "The model service's content filter stopped the request or its answer; rephrase the message and try again.",
  model_bad_request: "The model service refused the request as malformed.",
  model_rate_limited: "The model service is rate limiting this server; try again in a minute.",
  model_unavailable: "The model service is unavailable; try again later.",
  model_bad_response: "The model service sent an answer that is not a chat completion.",
  model_timeout: "The model did not answer in time.",
};

/** How much of an upstream's own message a model_bad_request quotes (redacted first). */
const QUOTED_CHARS = 300;

export interface ModelErrorOptions {
  /** The text fit for a user; the code's own text when absent. */
  message?: string;
  /** How long the upstream asked us to wait (its Retry-After), passed on to our client. */
  retryAfterSeconds?: number | null;
}

/**
 * The model could not answer. `message` is a text for its `code`, fit for a user (a model_bad_request quotes the
 * upstream's own message, redacted; a model_not_found names the route and model once the router knows them);
 * `detail` is what the upstream actually said (its status, body, the runtime's error), for the log only: it can
 * quote our upstream key, its URL or its stack, so it never reaches a client, a stored turn or a frame.
 */
export class ModelError extends Error {
  readonly retryAfterSeconds: number | null;

  constructor(
    readonly code: ModelErrorCode,
    readonly detail: string,
    readonly status: number | null = null,
    /** The options, or (as before they were options) the user's text alone. */
    options: ModelErrorOptions | string = {},
  ) {
    const { message, retryAfterSeconds } = typeof options === "string" ? { message: options } : options;
    super(message ?? MODEL_ERROR_MESSAGES[code]);
    this.name = "ModelError";
    this.retryAfterSeconds = retryAfterSeconds ?? null;
  }

  static timeout(ms: number): ModelError {
    return new ModelError("model_timeout", `no answer within ${ms} ms`, null, {
      message: `The model did not answer within ${ms} ms.`,
    });
  }

  /** A refusal of the request as malformed, quoting the upstream's own words (`redacted` by the caller). */
  static badRequest(detail: string, status: number | null, redacted: string | null): ModelError {
    const quoted = redacted?.trim().replace(/\s+/g, " ").slice(0, QUOTED_CHARS);
    return new ModelError("model_bad_request", detail, status, {
      ...(quoted ? { message: `The model service refused the request: ${quoted}` } : {}),
    });
  }

  /** The same failure, its text naming the route that failed and the model it names (for the causes that are the route's). */
  onRoute(route: { name: string; model: string }): ModelError {
    const envVar = route.name === "default" ? " (LLM_MODEL for the default route)" : "";
    if (this.code === "model_not_found") {
      return new ModelError(this.code, this.detail, this.status, {
        message: `The model service of model route '${route.name}' does not know the model '${route.model}'; the operator must set the route's model${envVar} to one the service lists.`,
        retryAfterSeconds: this.retryAfterSeconds,
      });
    }
    return this;
  }
}

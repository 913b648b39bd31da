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
  /** The most the answer may take, sent as the provider's `max_tokens` (absent: the provider's default). */
  maxTokens?: number;
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

/** Why a model call failed, one code a cause; the user sees only the fixed text of its code. */
export type ModelErrorCode =
  | "model_auth_failed"
  | "model_not_found"
  | "context_length_exceeded"
  | "content_filtered"
  | "model_bad_request"
  | "model_rate_limited"
  | "model_unavailable"
  | "model_bad_response"
  | "model_timeout"
  | "model_request_rejected";

const MODEL_ERROR_MESSAGES: Record<ModelErrorCode, string> = {
  model_auth_failed: "The model service refused this server's credentials; the operator must check its API key.",
  model_not_found:
    "The model service does not know the model this route names; the operator must fix the route's model.",
  context_length_exceeded: "The conversation is too long for the model's context.",
  content_filtered: "The model service's content filter stopped the request or its answer.",
  model_bad_request: "The model service refused the request as malformed.",
  model_rate_limited: "The model service is rate limiting this server; try again in a minute.",
  model_unavailable: "The model service is unavailable; try again later.",
  model_bad_response: "The model service sent an answer that is not a chat completion.",
  model_timeout: "The model did not answer in time.",
  model_request_rejected: "The model service refused the request (for example, the conversation is too long).",
};

/**
 * The model could not answer. `message` is a fixed text for its `code`, fit for a user; `detail` is what
 * the upstream actually said (its status, body, the runtime's error), for the log only: it can quote our
 * upstream key, its URL or its stack, so it never reaches a client, a stored turn or a frame.
 */
export class ModelError extends Error {
  constructor(
    readonly code: ModelErrorCode,
    readonly detail: string,
    readonly status: number | null = null,
    message: string = MODEL_ERROR_MESSAGES[code],
  ) {
    super(message);
    this.name = "ModelError";
  }

  static timeout(ms: number): ModelError {
    return new ModelError(
      "model_timeout",
      `no answer within ${ms} ms`,
      null,
      `The model did not answer within ${ms} ms.`,
    );
  }

  /** The cause an upstream error status stands for. */
  static fromStatus(status: number, detail: string): ModelError {
    if (status === 401 || status === 403) return new ModelError("model_auth_failed", detail, status);
    if (status === 429) return new ModelError("model_rate_limited", detail, status);
    if (status === 408 || status === 504) return new ModelError("model_timeout", detail, status);
    if (status >= 500) return new ModelError("model_unavailable", detail, status);
    return new ModelError("model_request_rejected", detail, status);
  }
}

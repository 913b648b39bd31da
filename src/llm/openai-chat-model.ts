// OpenAI-compatible ChatModel adapter: fetch, per-call timeout, abort, retries with backoff, clear errors.

import { ChatCompletionJson } from "../wire/openai";
import { type ChatModel, type ChatRequest, type ChatResponse, ModelError } from "./chat-model";
import { callWithRetries, jsonAnswer, mediaTypeOf, redactKey } from "./http-model-call";
import { responseOf } from "./model-events";
import { openAIStreamEvents } from "./openai-stream-events";
import { RETRYABLE_STATUSES } from "./retry";

export interface OpenAIChatModelOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  callTimeoutMs: number;
  maxRetries?: number;
  /** First backoff; doubled each retry. */
  retryBaseMs?: number;
  fetch?: typeof fetch;
  /**
   * Sent as `prompt_cache_key`: OpenAI routes requests with the same key (one session's) to the same prompt cache.
   * Only where the route says its server takes the field.
   */
  promptCacheKey?: string;
  /**
   * The field the answer's limit is sent in (default `max_tokens`): OpenAI's reasoning models refuse `max_tokens`
   * and take only `max_completion_tokens`; many other OpenAI-compatible servers take only `max_tokens`.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
  /**
   * Takes every secret in play out of an upstream's words (src/secret-redaction.ts); the route's key alone when
   * absent. A model_bad_request quotes the upstream's message after it.
   */
  redact?: (text: string) => string;
}

export class OpenAIChatModel implements ChatModel {
  readonly name: string;
  constructor(private readonly options: OpenAIChatModelOptions) {
    this.name = options.model;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const { options } = this;
    const body = JSON.stringify({
      model: options.model,
      messages: request.messages,
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
      // In the field the route names (sent only when the call sets a limit: a route's answer reserve, a compaction).
      ...(request.maxTokens ? { [options.maxTokensField ?? "max_tokens"]: request.maxTokens } : {}),
      ...(request.onTextDelta ? { stream: true, stream_options: { include_usage: true } } : {}),
      ...(options.promptCacheKey ? { prompt_cache_key: options.promptCacheKey } : {}),
    });
    return callWithRetries({
      send: (signal) =>
        (options.fetch ?? fetch)(`${options.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json" },
          body,
          signal,
        }),
      read: (response) => this.readAnswer(response, request.onTextDelta, request.onFirstChunk),
      retryable: RETRYABLE_STATUSES,
      maxRetries: request.maxRetries ?? options.maxRetries ?? 2,
      callTimeoutMs: options.callTimeoutMs,
      retryBaseMs: options.retryBaseMs,
      signal: request.signal,
      redact: (text) => this.redact(text),
    });
  }

  private redact(text: string): string {
    return redactKey(this.options.apiKey, this.options.redact ? this.options.redact(text) : text);
  }

  /**
   * A 200 is an answer only if it is one: a JSON chat completion, or (when we asked for a stream) an
   * event stream of chat completion chunks that finishes. An HTML page, an empty body or a stream cut
   * short is a bad response, never an empty answer.
   */
  private async readAnswer(
    response: Response,
    onTextDelta?: (text: string) => void,
    onFirstChunk?: () => void,
  ): Promise<ChatResponse> {
    const type = mediaTypeOf(response);
    if (type === "text/event-stream" && onTextDelta) return this.readStream(response, onTextDelta, onFirstChunk);
    // A server that ignores `stream: true` and answers with one JSON completion has still answered.
    if (type === "application/json" || type.endsWith("+json")) {
      const answer = await this.readJson(response, onTextDelta);
      onFirstChunk?.();
      return answer;
    }
    await response.body?.cancel().catch(() => {});
    throw new ModelError("model_bad_response", `200 with content-type '${type || "(none)"}'`);
  }

  private async readJson(response: Response, onTextDelta?: (text: string) => void): Promise<ChatResponse> {
    const answer = await jsonAnswer(response, ChatCompletionJson, "a chat completion", (text) => this.redact(text));
    const choice = answer.choices[0];
    const content = choice?.message.content ?? null;
    if (content && onTextDelta) onTextDelta(content);
    return {
      content,
      toolCalls: (choice?.message.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
      finishReason: choice?.finish_reason ?? null,
      ...(answer.usage ? { usage: answer.usage } : {}),
    };
  }

  private async readStream(
    response: Response,
    onTextDelta: (text: string) => void,
    onFirstChunk?: () => void,
  ): Promise<ChatResponse> {
    if (!response.body) throw new ModelError("model_bad_response", "200 event stream with no body");
    return responseOf(
      openAIStreamEvents(response.body, (text) => this.redact(text)),
      onTextDelta,
      onFirstChunk,
    );
  }
}

// Anthropic Messages API ChatModel adapter (a route with provider "anthropic"): our chat request translated by
// chatRequestToMessages, POST <baseUrl>/v1/messages with x-api-key and anthropic-version, per-call timeout, abort,
// retries with backoff, the answer (JSON or the Messages event stream) back as a ChatResponse, errors as ModelErrors.

import { z } from "zod";
import { ChatRequestIn } from "../translate/anthropic-to-chat";
import { chatRequestToMessages, messageToChatResponse } from "../translate/chat-to-anthropic";
import { AnthropicMessage } from "../wire/anthropic";
import { type CacheTtl, withCacheBreakpoints } from "./anthropic-cache-breakpoints";
import { anthropicStreamEvents, tokenUsageOfAnthropic } from "./anthropic-stream-events";
import { type ChatModel, type ChatRequest, type ChatResponse, ModelError } from "./chat-model";
import { deadline } from "./deadline";
import { callWithRetries, DETAIL_CHARS, jsonAnswer, mediaTypeOf, redactKey } from "./http-model-call";
import { responseOf } from "./model-events";
import { RETRYABLE_STATUSES } from "./retry";

/** The answer of count_tokens: `{"input_tokens": N}`. */
const CountTokensAnswer = z.object({ input_tokens: z.number().int().min(0) });

/** The anthropic-version header a route sends unless it names another. */
export const DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

/** Anthropic's own "overloaded" status, retried like a 503. */
const ANTHROPIC_RETRYABLE: ReadonlySet<number> = new Set([...RETRYABLE_STATUSES, 529]);

export interface AnthropicChatModelOptions {
  /** As Anthropic's SDKs take it (https://api.anthropic.com); /v1/messages is added to it. */
  baseUrl: string;
  apiKey: string;
  model: string;
  anthropicVersion?: string;
  callTimeoutMs: number;
  maxRetries?: number;
  /** First backoff; doubled each retry. */
  retryBaseMs?: number;
  fetch?: typeof fetch;
  /** Prompt caching: `cache_control` breakpoints with this lifetime (anthropic-cache-breakpoints.ts); null: none. */
  promptCache?: { ttl: CacheTtl } | null;
  /**
   * Takes every secret in play out of an upstream's words (src/secret-redaction.ts); the route's key alone when
   * absent. A model_bad_request quotes the upstream's message after it.
   */
  redact?: (text: string) => string;
}

export class AnthropicChatModel implements ChatModel {
  readonly name: string;
  constructor(private readonly options: AnthropicChatModelOptions) {
    this.name = options.model;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const { options } = this;
    const body = this.requestBody(request);
    return callWithRetries({
      send: (signal) =>
        (options.fetch ?? fetch)(`${options.baseUrl.replace(/\/+$/, "")}/v1/messages`, {
          method: "POST",
          headers: {
            "x-api-key": options.apiKey,
            "anthropic-version": options.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
            "content-type": "application/json",
          },
          body,
          signal,
        }),
      read: (response) => this.readAnswer(response, request.onTextDelta, request.onFirstChunk),
      retryable: ANTHROPIC_RETRYABLE,
      maxRetries: request.maxRetries ?? options.maxRetries ?? 2,
      callTimeoutMs: options.callTimeoutMs,
      retryBaseMs: options.retryBaseMs,
      signal: request.signal,
      redact: (text) => this.redact(text),
    });
  }

  /**
   * The request's input tokens as Anthropic counts them (POST /v1/messages/count_tokens, one attempt within the call
   * timeout); null when the count failed (the caller goes on with its estimate), the failure in the detail it drops.
   */
  async countTokens(request: ChatRequest): Promise<number | null> {
    const { options } = this;
    const { max_tokens: _, stream: __, ...body } = JSON.parse(this.requestBody(request)) as Record<string, unknown>;
    const timer = deadline(options.callTimeoutMs, request.signal);
    try {
      const response = await (options.fetch ?? fetch)(
        `${options.baseUrl.replace(/\/+$/, "")}/v1/messages/count_tokens`,
        {
          method: "POST",
          headers: {
            "x-api-key": options.apiKey,
            "anthropic-version": options.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
            "content-type": "application/json",
          },
          body: JSON.stringify(body),
          signal: timer.signal,
        },
      );
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        return null;
      }
      const counted = CountTokensAnswer.safeParse(await response.json());
      return counted.success ? counted.data.input_tokens : null;
    } catch {
      // A count that fails is no reason to refuse the call: the estimate decides instead.
      request.signal?.throwIfAborted();
      return null;
    } finally {
      timer.clear();
    }
  }

  /** The Messages request for our chat request; one the translation cannot carry is refused before any call. */
  private requestBody(request: ChatRequest): string {
    const chat = ChatRequestIn.safeParse({
      model: this.options.model,
      messages: request.messages,
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
      ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
      ...(request.onTextDelta ? { stream: true } : {}),
    });
    if (!chat.success) {
      throw ModelError.badRequest(`not a chat request: ${chat.error.message.slice(0, DETAIL_CHARS)}`, null, null);
    }
    const translated = chatRequestToMessages(chat.data, { model: this.options.model });
    if (!translated.ok) {
      // Our own words about what the Messages API cannot carry (no upstream text, nothing secret): shown as they are.
      throw ModelError.badRequest(
        `not sendable to the Messages API: ${translated.param}: ${translated.message}`,
        null,
        `${translated.param}: ${translated.message}`,
      );
    }
    // A request that will not recur (a compaction's) marks no breakpoints: a cache write would be paid for nothing.
    const cache = request.promptCache === false ? null : this.options.promptCache;
    return JSON.stringify(cache ? withCacheBreakpoints(translated.value, cache.ttl) : translated.value);
  }

  private redact(text: string): string {
    return redactKey(this.options.apiKey, this.options.redact ? this.options.redact(text) : text);
  }

  /** A 200 is an answer only if it is one: a Messages JSON message, or (when we streamed) an event stream that ends. */
  private async readAnswer(
    response: Response,
    onTextDelta?: (text: string) => void,
    onFirstChunk?: () => void,
  ): Promise<ChatResponse> {
    const type = mediaTypeOf(response);
    if (type === "text/event-stream" && onTextDelta) {
      if (!response.body) throw new ModelError("model_bad_response", "200 event stream with no body");
      return responseOf(
        anthropicStreamEvents(response.body, (text) => this.redact(text)),
        onTextDelta,
        onFirstChunk,
      );
    }
    if (type === "application/json" || type.endsWith("+json")) {
      const answer = await this.readJson(response, onTextDelta);
      onFirstChunk?.();
      return answer;
    }
    await response.body?.cancel().catch(() => {});
    throw new ModelError("model_bad_response", `200 with content-type '${type || "(none)"}'`);
  }

  private async readJson(response: Response, onTextDelta?: (text: string) => void): Promise<ChatResponse> {
    const answer = await jsonAnswer(response, AnthropicMessage, "a Messages message", (text) => this.redact(text));
    const choice = messageToChatResponse(answer, 0).choices[0];
    const content = choice?.message.content || null;
    if (content && onTextDelta) onTextDelta(content);
    return {
      content,
      toolCalls: (choice?.message.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
      finishReason: choice?.finish_reason ?? null,
      usage: tokenUsageOfAnthropic(answer.usage),
    };
  }
}

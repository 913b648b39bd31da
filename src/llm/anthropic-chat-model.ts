// Anthropic Messages API ChatModel adapter (a route with provider "anthropic"): our chat request translated by
// chatRequestToMessages, POST <baseUrl>/v1/messages with x-api-key and anthropic-version, per-call timeout, abort,
// retries with backoff, the answer (JSON or the Messages event stream) back as a ChatResponse, errors as ModelErrors.

import { ChatRequestIn } from "../translate/anthropic-chat";
import { chatRequestToMessages, chatUsageOf, messageToChatResponse } from "../translate/chat-anthropic";
import { AnthropicMessage } from "../wire/anthropic";
import { anthropicStreamEvents } from "./anthropic-stream-events";
import { type ChatModel, type ChatRequest, type ChatResponse, ModelError } from "./chat-model";
import { deadline } from "./deadline";
import { responseOf } from "./model-events";
import { backoff, describeError, RETRYABLE_STATUSES } from "./retry";

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
}

/** How much of an upstream's error body the log keeps. */
const DETAIL_CHARS = 500;

export class AnthropicChatModel implements ChatModel {
  readonly name: string;
  constructor(private readonly options: AnthropicChatModelOptions) {
    this.name = options.model;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const body = this.requestBody(request);
    const maxRetries = request.maxRetries ?? this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      request.signal?.throwIfAborted();
      const timer = deadline(this.options.callTimeoutMs, request.signal);
      try {
        let response: Response;
        try {
          response = await (this.options.fetch ?? fetch)(`${this.options.baseUrl.replace(/\/+$/, "")}/v1/messages`, {
            method: "POST",
            headers: {
              "x-api-key": this.options.apiKey,
              "anthropic-version": this.options.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
              "content-type": "application/json",
            },
            body,
            signal: timer.signal,
          });
        } catch (error) {
          request.signal?.throwIfAborted();
          if (timer.signal.aborted) throw ModelError.timeout(this.options.callTimeoutMs);
          if (attempt < maxRetries) {
            await backoff(this.retryDelay(attempt, null), request.signal);
            continue;
          }
          throw new ModelError("model_unavailable", this.redact(`unreachable: ${describeError(error)}`));
        }
        if (response.ok) {
          try {
            return await this.readAnswer(response, request.onTextDelta);
          } catch (error) {
            request.signal?.throwIfAborted();
            if (timer.signal.aborted) throw ModelError.timeout(this.options.callTimeoutMs);
            if (error instanceof ModelError) throw error;
            throw new ModelError(
              "model_bad_response",
              this.redact(`reading the answer failed: ${describeError(error)}`),
            );
          }
        }
        const text = await response.text().catch(() => "");
        if (ANTHROPIC_RETRYABLE.has(response.status) && attempt < maxRetries) {
          await backoff(this.retryDelay(attempt, response.headers.get("retry-after")), request.signal);
          continue;
        }
        throw ModelError.fromStatus(
          response.status,
          this.redact(`HTTP ${response.status}: ${text.slice(0, DETAIL_CHARS) || response.statusText || "no body"}`),
        );
      } finally {
        timer.clear();
      }
    }
  }

  /** The Messages request for our chat request; one the translation cannot carry is refused before any call. */
  private requestBody(request: ChatRequest): string {
    const chat = ChatRequestIn.safeParse({
      model: this.options.model,
      messages: request.messages,
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
      ...(request.onTextDelta ? { stream: true } : {}),
    });
    if (!chat.success) {
      throw new ModelError(
        "model_request_rejected",
        `not a chat request: ${chat.error.message.slice(0, DETAIL_CHARS)}`,
      );
    }
    const translated = chatRequestToMessages(chat.data, { model: this.options.model });
    if (!translated.ok) {
      throw new ModelError(
        "model_request_rejected",
        `not sendable to the Messages API: ${translated.param}: ${translated.message}`,
      );
    }
    return JSON.stringify(translated.value);
  }

  /** Our own key never reaches a log line, even when an upstream quotes it back in an error. */
  private redact(text: string): string {
    const key = this.options.apiKey;
    return key.length >= 4 ? text.replaceAll(key, "[redacted]") : text;
  }

  private retryDelay(attempt: number, retryAfter: string | null): number {
    const fromHeader = retryAfter ? Number(retryAfter) * 1000 : Number.NaN;
    return Number.isFinite(fromHeader)
      ? Math.min(fromHeader, 10_000)
      : (this.options.retryBaseMs ?? 250) * 2 ** attempt;
  }

  /** A 200 is an answer only if it is one: a Messages JSON message, or (when we streamed) an event stream that ends. */
  private async readAnswer(response: Response, onTextDelta?: (text: string) => void): Promise<ChatResponse> {
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    if (type === "text/event-stream" && onTextDelta) {
      if (!response.body) throw new ModelError("model_bad_response", "200 event stream with no body");
      return responseOf(
        anthropicStreamEvents(response.body, (text) => this.redact(text)),
        onTextDelta,
      );
    }
    if (type === "application/json" || type.endsWith("+json")) return this.readJson(response, onTextDelta);
    await response.body?.cancel().catch(() => {});
    throw new ModelError("model_bad_response", `200 with content-type '${type || "(none)"}'`);
  }

  private async readJson(response: Response, onTextDelta?: (text: string) => void): Promise<ChatResponse> {
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ModelError("model_bad_response", this.redact(`200 body is not JSON: ${text.slice(0, DETAIL_CHARS)}`));
    }
    const parsed = AnthropicMessage.safeParse(json);
    if (!parsed.success) {
      throw new ModelError(
        "model_bad_response",
        this.redact(`200 body is not a Messages message: ${text.slice(0, DETAIL_CHARS)}`),
      );
    }
    const choice = messageToChatResponse(parsed.data, 0).choices[0];
    const content = choice?.message.content || null;
    if (content && onTextDelta) onTextDelta(content);
    const usage = chatUsageOf(parsed.data.usage);
    return {
      content,
      toolCalls: (choice?.message.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
      finishReason: choice?.finish_reason ?? null,
      usage: {
        promptTokens: usage.prompt_tokens,
        completionTokens: usage.completion_tokens,
        totalTokens: usage.total_tokens,
      },
    };
  }
}

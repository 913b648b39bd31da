// OpenAI-compatible ChatModel adapter: fetch, per-call timeout, abort, retries with backoff, clear errors.
import { z } from "zod";
import { type ChatModel, type ChatRequest, type ChatResponse, ModelError, type ModelToolCall } from "./chat-model";
import { deadline } from "./deadline";
import { sseData } from "./sse-lines";

export interface OpenAIChatModelOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  callTimeoutMs: number;
  maxRetries?: number;
  /** First backoff; doubled each retry. */
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

const ToolCallJson = z.object({ id: z.string(), function: z.object({ name: z.string(), arguments: z.string() }) });
const Usage = z
  .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
  .transform((u) => ({
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens,
    totalTokens: u.total_tokens,
  }));
const CompletionJson = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional(), tool_calls: z.array(ToolCallJson).optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: Usage.nullable().optional(),
});
const ChunkJson = z
  .object({
    choices: z
      .array(
        z.object({
          delta: z
            .object({
              content: z.string().nullable().optional(),
              tool_calls: z
                .array(
                  z.object({
                    index: z.number(),
                    id: z.string().optional(),
                    function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
                  }),
                )
                .optional(),
            })
            .optional(),
          finish_reason: z.string().nullable().optional(),
        }),
      )
      .optional(),
    usage: Usage.nullable().optional(),
    error: z.object({ message: z.string() }).optional(),
  })
  // A chunk carries choices, usage or an error; any other JSON object is not a chat completion chunk.
  .refine((c) => c.choices !== undefined || c.usage != null || c.error !== undefined, "is not a chunk")
  .transform((c) => ({ ...c, choices: c.choices ?? [] }));

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504]);
/** How much of an upstream's error body the log keeps. */
const DETAIL_CHARS = 500;

export class OpenAIChatModel implements ChatModel {
  readonly name: string;
  constructor(private readonly options: OpenAIChatModelOptions) {
    this.name = options.model;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const maxRetries = request.maxRetries ?? this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      request.signal?.throwIfAborted();
      const timer = deadline(this.options.callTimeoutMs, request.signal);
      try {
        let response: Response;
        try {
          response = await (this.options.fetch ?? fetch)(
            `${this.options.baseUrl.replace(/\/+$/, "")}/chat/completions`,
            {
              method: "POST",
              headers: { authorization: `Bearer ${this.options.apiKey}`, "content-type": "application/json" },
              body: JSON.stringify({
                model: this.options.model,
                messages: request.messages,
                ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
                ...(request.onTextDelta ? { stream: true, stream_options: { include_usage: true } } : {}),
              }),
              signal: timer.signal,
            },
          );
        } catch (error) {
          request.signal?.throwIfAborted();
          if (timer.signal.aborted) throw ModelError.timeout(this.options.callTimeoutMs);
          if (attempt < maxRetries) {
            await backoff(this.retryDelay(attempt, null), request.signal);
            continue;
          }
          throw new ModelError("model_unavailable", this.redact(`unreachable: ${describe(error)}`));
        }
        if (response.ok) {
          try {
            return await this.readAnswer(response, request.onTextDelta);
          } catch (error) {
            request.signal?.throwIfAborted();
            if (timer.signal.aborted) throw ModelError.timeout(this.options.callTimeoutMs);
            if (error instanceof ModelError) throw error;
            throw new ModelError("model_bad_response", this.redact(`reading the answer failed: ${describe(error)}`));
          }
        }
        const text = await response.text().catch(() => "");
        if (RETRYABLE.has(response.status) && attempt < maxRetries) {
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

  /**
   * A 200 is an answer only if it is one: a JSON chat completion, or (when we asked for a stream) an
   * event stream of chat completion chunks that finishes. An HTML page, an empty body or a stream cut
   * short is a bad response, never an empty answer.
   */
  private async readAnswer(response: Response, onTextDelta?: (text: string) => void): Promise<ChatResponse> {
    const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    if (type === "text/event-stream" && onTextDelta) return this.readStream(response, onTextDelta);
    // A server that ignores `stream: true` and answers with one JSON completion has still answered.
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
    const parsed = CompletionJson.safeParse(json);
    if (!parsed.success) {
      throw new ModelError(
        "model_bad_response",
        this.redact(`200 body is not a chat completion: ${text.slice(0, DETAIL_CHARS)}`),
      );
    }
    const choice = parsed.data.choices[0];
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
      ...(parsed.data.usage ? { usage: parsed.data.usage } : {}),
    };
  }

  private async readStream(response: Response, onTextDelta: (text: string) => void): Promise<ChatResponse> {
    if (!response.body) throw new ModelError("model_bad_response", "200 event stream with no body");
    let content = "";
    let finishReason: string | null = null;
    let usage: ChatResponse["usage"];
    let done = false;
    let chunks = 0;
    const calls: ModelToolCall[] = [];
    for await (const data of sseData(response.body)) {
      if (data === "[DONE]") {
        done = true;
        break;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw new ModelError(
          "model_bad_response",
          this.redact(`stream event is not JSON: ${data.slice(0, DETAIL_CHARS)}`),
        );
      }
      const chunk = ChunkJson.safeParse(json);
      if (!chunk.success) {
        throw new ModelError(
          "model_bad_response",
          this.redact(`stream event is not a chat completion chunk: ${data.slice(0, DETAIL_CHARS)}`),
        );
      }
      if (chunk.data.error) {
        throw new ModelError("model_unavailable", this.redact(`stream error event: ${chunk.data.error.message}`));
      }
      chunks++;
      if (chunk.data.usage) usage = chunk.data.usage;
      for (const choice of chunk.data.choices) {
        if (choice.finish_reason) finishReason = choice.finish_reason;
        if (choice.delta?.content) {
          content += choice.delta.content;
          onTextDelta(choice.delta.content);
        }
        for (const fragment of choice.delta?.tool_calls ?? []) {
          const call = calls[fragment.index] ?? { id: "", name: "", arguments: "" };
          calls[fragment.index] = call;
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.name += fragment.function.name;
          if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
        }
      }
    }
    if (chunks === 0) throw new ModelError("model_bad_response", "the event stream carried no chat completion chunk");
    if (!done && finishReason === null) {
      throw new ModelError("model_bad_response", "the event stream ended before the answer finished");
    }
    return {
      content: content.length > 0 ? content : null,
      toolCalls: calls.filter(Boolean),
      finishReason,
      ...(usage ? { usage } : {}),
    };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Waits `ms`, or rejects at once when `signal` aborts; the abort listener is removed either way. */
function backoff(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

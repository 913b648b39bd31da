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
const ChunkJson = z.object({
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
    .default([]),
  usage: Usage.nullable().optional(),
  error: z.object({ message: z.string() }).optional(),
});

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504]);

export class OpenAIChatModel implements ChatModel {
  readonly name: string;
  constructor(private readonly options: OpenAIChatModelOptions) {
    this.name = options.model;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const maxRetries = this.options.maxRetries ?? 2;
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
          if (timer.signal.aborted) throw this.timeoutError();
          if (attempt < maxRetries) {
            await this.backoff(attempt, null, request.signal);
            continue;
          }
          const why = error instanceof Error ? error.message : String(error);
          throw new ModelError(`The model service could not be reached: ${why}.`);
        }
        if (response.ok) {
          try {
            return request.onTextDelta
              ? await this.readStream(response, request.onTextDelta)
              : await this.readJson(response);
          } catch (error) {
            request.signal?.throwIfAborted();
            if (timer.signal.aborted) throw this.timeoutError();
            throw error;
          }
        }
        const message = await upstreamErrorMessage(response);
        if (RETRYABLE.has(response.status) && attempt < maxRetries) {
          await this.backoff(attempt, response.headers.get("retry-after"), request.signal);
          continue;
        }
        throw new ModelError(`The model service answered ${response.status}: ${message}`, response.status);
      } finally {
        timer.clear();
      }
    }
  }

  private timeoutError(): ModelError {
    return new ModelError(`The model did not answer within ${this.options.callTimeoutMs} ms.`);
  }

  private async backoff(attempt: number, retryAfter: string | null, signal?: AbortSignal): Promise<void> {
    const fromHeader = retryAfter ? Number(retryAfter) * 1000 : Number.NaN;
    const ms = Number.isFinite(fromHeader)
      ? Math.min(fromHeader, 10_000)
      : (this.options.retryBaseMs ?? 250) * 2 ** attempt;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  }

  private async readJson(response: Response): Promise<ChatResponse> {
    const parsed = CompletionJson.safeParse(await response.json().catch(() => null));
    if (!parsed.success) throw new ModelError("The model service answered with a body that is not a chat completion.");
    const choice = parsed.data.choices[0];
    return {
      content: choice?.message.content ?? null,
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
    if (!response.body) throw new ModelError("The model service answered a stream with no body.");
    let content = "";
    let finishReason: string | null = null;
    let usage: ChatResponse["usage"];
    const calls: ModelToolCall[] = [];
    for await (const data of sseData(response.body)) {
      if (data === "[DONE]") break;
      const chunk = ChunkJson.safeParse(JSON.parse(data));
      if (!chunk.success)
        throw new ModelError("The model service streamed a chunk that is not a chat completion chunk.");
      if (chunk.data.error) throw new ModelError(`The model stream failed: ${chunk.data.error.message}`);
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
    return {
      content: content.length > 0 ? content : null,
      toolCalls: calls.filter(Boolean),
      finishReason,
      ...(usage ? { usage } : {}),
    };
  }
}

async function upstreamErrorMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof body.error?.message === "string") return body.error.message;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.slice(0, 300) || response.statusText || "no details";
}

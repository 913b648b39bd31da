// The loop's model on Workers AI: calls the AI binding and folds the model events it yields (workers-ai.ts) into
// the loop's answer, with no OpenAI HTTP body in between; a per-call deadline, abort, and retries in place of a
// binding that is busy or briefly broken, as the OpenAI-compatible model has them.
import { type ChatModel, type ChatRequest, type ChatResponse, ModelError } from "./chat-model";
import { deadline } from "./deadline";
import { responseOf } from "./model-events";
import { backoff, describeError, RETRYABLE_STATUSES } from "./retry";
import { aiInputs, runWorkersAi, type WorkersAiBinding, WorkersAiError } from "./workers-ai";

export interface WorkersAiChatModelOptions {
  ai: WorkersAiBinding;
  model: string;
  callTimeoutMs: number;
  maxRetries?: number;
  /** First backoff; doubled each retry. */
  retryBaseMs?: number;
}

export class WorkersAiChatModel implements ChatModel {
  readonly name: string;

  constructor(private readonly options: WorkersAiChatModelOptions) {
    this.name = options.model;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const { ai, model, callTimeoutMs } = this.options;
    const maxRetries = request.maxRetries ?? this.options.maxRetries ?? 2;
    const streamed = request.onTextDelta !== undefined;
    const tools = request.tools && request.tools.length > 0 ? { tools: request.tools } : {};
    const maxTokens = request.maxTokens ? { max_tokens: request.maxTokens } : {};
    const inputs = aiInputs({ messages: request.messages, ...tools, ...maxTokens }, streamed);
    for (let attempt = 0; ; attempt++) {
      request.signal?.throwIfAborted();
      const timer = deadline(callTimeoutMs, request.signal);
      try {
        const answer = await runWorkersAi(ai, model, inputs, timer.signal);
        const response = await responseOf(answer.events, request.onTextDelta, request.onFirstChunk);
        // An answer asked for whole keeps empty text as "" (null beside tool calls), as a chat.completion has it.
        if (!streamed && response.content === null && response.toolCalls.length === 0) {
          return { ...response, content: "" };
        }
        return response;
      } catch (error) {
        request.signal?.throwIfAborted();
        if (timer.signal.aborted) throw ModelError.timeout(callTimeoutMs);
        if (error instanceof WorkersAiError && RETRYABLE_STATUSES.has(error.status) && attempt < maxRetries) {
          await backoff((this.options.retryBaseMs ?? 250) * 2 ** attempt, request.signal);
          continue;
        }
        if (error instanceof ModelError) throw error;
        throw new ModelError("model_bad_response", `reading the answer failed: ${describeError(error)}`);
      } finally {
        timer.clear();
      }
    }
  }
}

// ChatModel: the one narrow interface the agent loop uses to reach a model.

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

/** A tool as the chat completions API takes it. */
export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Offered tools, for models with native function calling. */
  tools?: ChatTool[];
  signal?: AbortSignal;
  /** Receives the answer's text as it streams, when the model streams. */
  onTextDelta?: (text: string) => void;
}

export interface ChatResponse {
  content: string | null;
  toolCalls: ModelToolCall[];
  finishReason: string | null;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

export interface ChatModel {
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
}

/** The model could not answer: the message says why, in words fit for a user. */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

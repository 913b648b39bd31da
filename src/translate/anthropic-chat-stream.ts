// Streams translated event by event: a chat completion chunk stream as Anthropic's message events (for an
// Anthropic client on a chat route), and Anthropic's events as chat completion chunks (for an OpenAI client on an
// Anthropic route). Each is a small state machine: push one parsed event, get the events to send.
import { z } from "zod";
import type { OpenAIErrorBody } from "../errors";
import {
  ANTHROPIC_ERROR_STATUS,
  isAnthropicErrorType,
  type MessageStreamEvent,
  type StopReason,
} from "../wire/anthropic";
import {
  anthropicErrorToOpenAI,
  anthropicUsageOf,
  type ChatUsageIn,
  type ChatUsageOut,
  messageIdOf,
  stopReasonOfFinish,
} from "./anthropic-to-chat";
import { chatUsageOf, finishOfStopReason } from "./chat-to-anthropic";

type UsageCounts = Parameters<typeof chatUsageOf>[0];

const nullish = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/** A `chat.completion.chunk` as the translation reads it. */
export const ChatChunkIn = z.looseObject({
  id: z.string().optional(),
  choices: nullish(
    z.array(
      z.looseObject({
        delta: nullish(
          z.looseObject({
            content: nullish(z.string()),
            refusal: nullish(z.string()),
            tool_calls: nullish(
              z.array(
                z.looseObject({
                  index: z.number().int(),
                  id: nullish(z.string()),
                  function: nullish(z.looseObject({ name: nullish(z.string()), arguments: nullish(z.string()) })),
                }),
              ),
            ),
          }),
        ),
        finish_reason: nullish(z.string()),
        stop_reason: nullish(z.union([z.string(), z.number()])),
      }),
    ),
  ),
  usage: nullish(
    z.looseObject({
      prompt_tokens: z.number(),
      completion_tokens: z.number(),
      prompt_tokens_details: nullish(z.looseObject({ cached_tokens: nullish(z.number()) })),
    }),
  ),
  error: z.looseObject({ message: z.string() }).optional(),
});
export type ChatChunkIn = z.infer<typeof ChatChunkIn>;

/** The message stream's one error for an upstream stream that ended before its answer did. */
export const STREAM_CUT_MESSAGE = "The upstream stream ended before the answer finished.";

/**
 * A chat completion chunk stream as Anthropic's events: message_start first, a content block per run of text and
 * per tool call (deltas in between, a stop when the next begins), then message_delta (the stop reason and the
 * usage of the final usage chunk) and message_stop. Tool calls are taken in the order they start, as chat
 * completions streams send them.
 */
export class ChatChunksToMessageEvents {
  private started = false;
  private done = false;
  private nextBlock = 0;
  private open: { index: number; kind: "text" | "tool_use" } | null = null;
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: StopReason | null = null;
  private stopSequence: string | null = null;
  private usage: ChatUsageIn | null = null;

  constructor(private readonly options: { model: string; id?: string }) {}

  push(chunk: ChatChunkIn): MessageStreamEvent[] {
    if (this.done) return [];
    const out: MessageStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({
        type: "message_start",
        message: {
          id: messageIdOf(this.options.id ?? chunk.id),
          type: "message",
          role: "assistant",
          content: [],
          model: this.options.model,
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      });
    }
    if (chunk.error) {
      this.closeBlock(out);
      this.done = true;
      out.push({ type: "error", error: { type: "api_error", message: chunk.error.message } });
      return out;
    }
    for (const choice of chunk.choices ?? []) {
      const text = `${choice.delta?.content ?? ""}${choice.delta?.refusal ?? ""}`;
      if (choice.delta?.refusal) this.stopReason = "refusal";
      if (text !== "") {
        const index = this.openBlock(out, "text", () => ({ type: "text", text: "" }));
        out.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
      }
      for (const fragment of choice.delta?.tool_calls ?? []) {
        let index = this.toolBlocks.get(fragment.index);
        if (index === undefined) {
          index = this.openBlock(out, "tool_use", (block) => ({
            type: "tool_use",
            id: fragment.id ?? `toolu_${block}`,
            name: fragment.function?.name ?? "",
            input: {},
          }));
          this.toolBlocks.set(fragment.index, index);
        }
        const partial = fragment.function?.arguments ?? "";
        if (partial !== "")
          out.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
      }
      if (choice.finish_reason) {
        if (this.stopReason === null) this.stopReason = stopReasonOfFinish(choice.finish_reason);
        if (choice.finish_reason === "stop" && typeof choice.stop_reason === "string") {
          this.stopReason = "stop_sequence";
          this.stopSequence = choice.stop_reason;
        }
        this.closeBlock(out);
      }
    }
    if (chunk.usage) this.usage = chunk.usage;
    if (this.stopReason !== null && this.usage !== null) this.finish(out);
    return out;
  }

  /** The stream's end ([DONE] or the body's end): what has not been sent yet, or an error if the answer was cut. */
  end(): MessageStreamEvent[] {
    if (this.done) return [];
    const out: MessageStreamEvent[] = [];
    if (this.stopReason === null) {
      this.done = true;
      out.push({ type: "error", error: { type: "api_error", message: STREAM_CUT_MESSAGE } });
      return out;
    }
    this.finish(out);
    return out;
  }

  private openBlock(
    out: MessageStreamEvent[],
    kind: "text" | "tool_use",
    block: (index: number) => Extract<MessageStreamEvent, { type: "content_block_start" }>["content_block"],
  ): number {
    if (kind === "text" && this.open?.kind === "text") return this.open.index;
    this.closeBlock(out);
    const index = this.nextBlock++;
    this.open = { index, kind };
    out.push({ type: "content_block_start", index, content_block: block(index) });
    return index;
  }

  private closeBlock(out: MessageStreamEvent[]): void {
    if (this.open === null) return;
    out.push({ type: "content_block_stop", index: this.open.index });
    this.open = null;
  }

  private finish(out: MessageStreamEvent[]): void {
    this.closeBlock(out);
    this.done = true;
    const usage = anthropicUsageOf(this.usage);
    out.push({
      type: "message_delta",
      delta: { stop_reason: this.stopReason ?? "end_turn", stop_sequence: this.stopSequence },
      usage,
    });
    out.push({ type: "message_stop" });
  }
}

/** A `chat.completion.chunk` as the translation writes it. */
export interface ChatChunkOut {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: { index: 0; delta: Record<string, unknown>; finish_reason: string | null; logprobs: null }[];
  usage?: ChatUsageOut | null;
}

/** What an Anthropic stream becomes on the chat side: chunks, or an error event (`data: {"error":...}`). */
export type ChatStreamItem = ChatChunkOut | OpenAIErrorBody;

/**
 * Anthropic's events as chat completion chunks: the role first, text as content deltas, each tool_use block as a
 * tool call (its index, id and name, then its argument fragments), the finish reason, and with `includeUsage`
 * a last chunk with the usage and no choices. Thinking blocks are dropped.
 */
export class MessageEventsToChatChunks {
  private id = "";
  private model = "";
  private nextTool = 0;
  private readonly toolOfBlock = new Map<number, number>();
  private usage: UsageCounts = { input_tokens: 0, output_tokens: 0 };

  constructor(private readonly options: { created: number; includeUsage: boolean }) {}

  push(event: MessageStreamEvent): ChatStreamItem[] {
    switch (event.type) {
      case "message_start":
        this.id = event.message.id;
        this.model = event.message.model;
        this.usage = { ...event.message.usage };
        return [this.chunk({ role: "assistant", content: "" })];
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text" && typeof block.text === "string" && block.text !== "")
          return [this.chunk({ content: block.text })];
        if (block.type !== "tool_use") return [];
        const index = this.nextTool++;
        this.toolOfBlock.set(event.index, index);
        const call = {
          index,
          id: String(block.id),
          type: "function",
          function: { name: String(block.name), arguments: "" },
        };
        return [this.chunk({ tool_calls: [call] })];
      }
      case "content_block_delta": {
        const delta = event.delta;
        if (delta.type === "text_delta") return delta.text === "" ? [] : [this.chunk({ content: delta.text })];
        const index = this.toolOfBlock.get(event.index);
        if (delta.type !== "input_json_delta" || index === undefined || delta.partial_json === "") return [];
        return [this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
      }
      case "message_delta":
        this.usage = { ...this.usage, ...definedOnly(event.usage) };
        return [this.chunk({}, finishOfStopReason(event.delta.stop_reason))];
      case "message_stop":
        return this.options.includeUsage ? [{ ...this.chunk({}), choices: [], usage: chatUsageOf(this.usage) }] : [];
      case "error": {
        const type = event.error.type;
        const status = isAnthropicErrorType(type) ? ANTHROPIC_ERROR_STATUS[type] : 500;
        return [anthropicErrorToOpenAI(status, { type: "error", error: event.error }).body];
      }
      default:
        return [];
    }
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): ChatChunkOut {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.options.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
      ...(this.options.includeUsage ? { usage: null } : {}),
    };
  }
}

/** Usage counts without their null and undefined fields, so a later usage does not erase an earlier count. */
function definedOnly(usage: UsageCounts): Partial<UsageCounts> {
  const out: Partial<UsageCounts> = {};
  if (usage.input_tokens != null) out.input_tokens = usage.input_tokens;
  out.output_tokens = usage.output_tokens;
  if (usage.cache_creation_input_tokens != null) out.cache_creation_input_tokens = usage.cache_creation_input_tokens;
  if (usage.cache_read_input_tokens != null) out.cache_read_input_tokens = usage.cache_read_input_tokens;
  return out;
}

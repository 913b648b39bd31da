// The door's `chat.completion.chunk`s as the Responses stream's events: a state machine that opens an output item
// when its first piece arrives (a message for text, a function_call per tool call index), closes it when the next
// item starts or the finish reason comes, and ends with response.completed, .incomplete or .failed carrying the
// whole response. Every event has its running sequence_number.
import type { OpenAIErrorBody } from "../errors";
import type {
  ResponseObject,
  ResponsesFunctionCall,
  ResponsesOutputItem,
  ResponsesOutputMessage,
  ResponsesStreamEvent,
  ResponsesUsage,
} from "../wire/responses";
import {
  type ChatUsage,
  failedResponse,
  type ResponseMeta,
  randomItemId,
  responseObject,
  responsesUsage,
  statusOfFinish,
} from "./responses-to-chat";

/** A chunk as the door streams it (the parsed data of one SSE event), or its error event. */
export interface DoorChunk {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: DoorToolCallDelta[];
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatUsage | null;
  error?: OpenAIErrorBody["error"];
}

/** A fragment of a tool call: the first of an index carries its id and name, the rest pieces of its arguments. */
export interface DoorToolCallDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** An event without its sequence number, which the machine adds. */
type Unnumbered<E> = E extends unknown ? Omit<E, "sequence_number"> : never;
type Event = Unnumbered<ResponsesStreamEvent>;

interface OpenText {
  kind: "message";
  index: number;
  item: ResponsesOutputMessage;
}
interface OpenCall {
  kind: "call";
  index: number;
  toolIndex: number;
  item: ResponsesFunctionCall;
}

export class ResponsesStreamMapper {
  private sequence = 0;
  private readonly output: ResponsesOutputItem[] = [];
  private open: OpenText | OpenCall | null = null;
  private finish: string | null = null;
  private usage: ResponsesUsage | null = null;
  private ended = false;
  private readonly newId: (prefix: "msg" | "fc") => string;

  constructor(private readonly meta: ResponseMeta) {
    this.newId = meta.newItemId ?? randomItemId;
  }

  /** The stream's first events: response.created and response.in_progress. */
  start(): ResponsesStreamEvent[] {
    const response = this.snapshot("in_progress");
    return this.number([
      { type: "response.created", response },
      { type: "response.in_progress", response },
    ]);
  }

  /** The events one chunk makes: text deltas, function call argument deltas, items opened and closed. */
  push(chunk: DoorChunk): ResponsesStreamEvent[] {
    if (this.ended) return [];
    if (chunk.error) return this.fail({ error: chunk.error });
    const events: Event[] = [];
    if (chunk.usage) this.usage = responsesUsage(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      const text = choice.delta?.content;
      if (text) events.push(...this.text(text));
      for (const call of choice.delta?.tool_calls ?? []) events.push(...this.call(call));
      if (choice.finish_reason) {
        this.finish = choice.finish_reason;
        events.push(...this.close());
      }
    }
    return this.number(events);
  }

  /** The last event: the whole response, completed or incomplete by the finish reason (items still open closed). */
  end(): ResponsesStreamEvent[] {
    if (this.ended) return [];
    const events = this.close();
    this.ended = true;
    const { status, incomplete_details } = statusOfFinish(this.finish);
    const response = responseObject(this.meta, {
      status,
      error: null,
      incomplete_details,
      output: [...this.output],
      usage: this.usage,
    });
    events.push({ type: status === "completed" ? "response.completed" : "response.incomplete", response });
    return this.number(events);
  }

  /** The door's error, mid-stream or before it: response.failed with what was answered so far. */
  fail(error: OpenAIErrorBody): ResponsesStreamEvent[] {
    if (this.ended) return [];
    this.ended = true;
    const partial = this.open
      ? [...this.output.slice(0, -1), { ...this.open.item, status: "incomplete" as const }]
      : this.output;
    return this.number([
      {
        type: "response.failed",
        response: failedResponse(error, this.meta, { output: [...partial], usage: this.usage }),
      },
    ]);
  }

  private snapshot(status: ResponseObject["status"]): ResponseObject {
    return responseObject(this.meta, { status, error: null, incomplete_details: null, output: [], usage: null });
  }

  private number(events: Event[]): ResponsesStreamEvent[] {
    return events.map((event) => ({ ...event, sequence_number: this.sequence++ }) as ResponsesStreamEvent);
  }

  private text(delta: string): Event[] {
    const events: Event[] = [];
    if (this.open?.kind !== "message") {
      events.push(...this.close());
      const item: ResponsesOutputMessage = {
        type: "message",
        id: this.newId("msg"),
        role: "assistant",
        status: "in_progress",
        content: [],
      };
      const index = this.output.push(item) - 1;
      this.open = { kind: "message", index, item };
      events.push(
        { type: "response.output_item.added", output_index: index, item: structuredClone(item) },
        {
          type: "response.content_part.added",
          output_index: index,
          item_id: item.id,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [], logprobs: [] },
        },
      );
      item.content.push({ type: "output_text", text: "", annotations: [], logprobs: [] });
    }
    const { item, index } = this.open as OpenText;
    const part = item.content[0];
    if (part) part.text += delta;
    events.push({
      type: "response.output_text.delta",
      output_index: index,
      item_id: item.id,
      content_index: 0,
      delta,
      logprobs: [],
    });
    return events;
  }

  private call(call: DoorToolCallDelta): Event[] {
    const events: Event[] = [];
    if (this.open?.kind !== "call" || this.open.toolIndex !== call.index) {
      events.push(...this.close());
      const item: ResponsesFunctionCall = {
        type: "function_call",
        id: this.newId("fc"),
        call_id: call.id ?? "",
        name: call.function?.name ?? "",
        arguments: "",
        status: "in_progress",
      };
      const index = this.output.push(item) - 1;
      this.open = { kind: "call", index, toolIndex: call.index, item };
      events.push({ type: "response.output_item.added", output_index: index, item: structuredClone(item) });
    }
    const { item, index } = this.open as OpenCall;
    const delta = call.function?.arguments ?? "";
    if (delta) {
      item.arguments += delta;
      events.push({ type: "response.function_call_arguments.delta", output_index: index, item_id: item.id, delta });
    }
    return events;
  }

  /** The open item's closing events, its status by the finish reason known so far. */
  private close(): Event[] {
    const open = this.open;
    if (!open) return [];
    this.open = null;
    open.item.status = statusOfFinish(this.finish).status === "completed" ? "completed" : "incomplete";
    const { index } = open;
    if (open.kind === "call") {
      const { item } = open;
      return [
        {
          type: "response.function_call_arguments.done",
          output_index: index,
          item_id: item.id,
          name: item.name,
          arguments: item.arguments,
        },
        { type: "response.output_item.done", output_index: index, item: structuredClone(item) },
      ];
    }
    const { item } = open;
    const part = item.content[0] ?? { type: "output_text" as const, text: "", annotations: [], logprobs: [] };
    return [
      {
        type: "response.output_text.done",
        output_index: index,
        item_id: item.id,
        content_index: 0,
        text: part.text,
        logprobs: [],
      },
      {
        type: "response.content_part.done",
        output_index: index,
        item_id: item.id,
        content_index: 0,
        part: { ...part },
      },
      { type: "response.output_item.done", output_index: index, item: structuredClone(item) },
    ];
  }
}

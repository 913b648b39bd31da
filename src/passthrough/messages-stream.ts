// A relayed chat completions event stream as Anthropic's message events: each upstream chunk parsed and pushed
// through the one stream translation (ChatChunksToMessageEvents), each event written `event: <type>` + `data:`.
// Our keepalive comments become `ping` events; an error frame of the relay becomes an `error` event.

import { createParser } from "eventsource-parser";
import { joinBytes } from "../bytes";
import { ChatChunkIn, ChatChunksToMessageEvents } from "../translate/anthropic-chat-stream";
import type { MessageStreamEvent } from "../wire/anthropic";

const encoder = new TextEncoder();

/** One event as the Messages API streams it. */
export function messageEventBytes(event: MessageStreamEvent): Uint8Array {
  return encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** `chat`: the relay's body (chat completion chunks, keepalive comments, error frames); `model`: the client's. */
export function messageEventStream(chat: ReadableStream<Uint8Array>, model: string): ReadableStream<Uint8Array> {
  const events = new ChatChunksToMessageEvents({ model });
  const decoder = new TextDecoder();
  let queue: Uint8Array[] = [];
  const write = (list: MessageStreamEvent[]) => {
    for (const event of list) queue.push(messageEventBytes(event));
  };
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === "[DONE]") return write(events.end());
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        // Not JSON: no chunk to translate. A stream that never finishes ends with an error event (end()).
        return;
      }
      const chunk = ChatChunkIn.safeParse(value);
      if (chunk.success) write(events.push(chunk.data));
    },
    onComment: () => write([{ type: "ping" }]),
  });
  const flushTo = (controller: TransformStreamDefaultController<Uint8Array>) => {
    // One write for all the events of one upstream chunk.
    if (queue.length > 0) controller.enqueue(joinBytes(queue));
    queue = [];
  };
  return chat.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(bytes, controller) {
        parser.feed(decoder.decode(bytes, { stream: true }));
        flushTo(controller);
      },
      flush(controller) {
        parser.feed(decoder.decode());
        write(events.end());
        flushTo(controller);
      },
    }),
  );
}

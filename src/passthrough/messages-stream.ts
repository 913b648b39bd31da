// A relayed chat completions event stream as Anthropic's message events: each upstream chunk parsed and pushed
// through the one stream translation (ChatChunksToMessageEvents), each event written `event: <type>` + `data:`.
// Our keepalive comments become `ping` events; an error frame of the relay becomes an `error` event.

import { ChatChunkIn, ChatChunksToMessageEvents } from "../translate/anthropic-chat-stream";
import type { MessageStreamEvent } from "../wire/anthropic";
import { translateEventStream } from "./sse-translate";

const encoder = new TextEncoder();

/** One event as the Messages API streams it. */
export function messageEventBytes(event: MessageStreamEvent): Uint8Array {
  return encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

/** `chat`: the relay's body (chat completion chunks, keepalive comments, error frames); `model`: the client's. */
export function messageEventStream(chat: ReadableStream<Uint8Array>, model: string): ReadableStream<Uint8Array> {
  const events = new ChatChunksToMessageEvents({ model });
  const bytes = (list: MessageStreamEvent[]) => list.map(messageEventBytes);
  return translateEventStream(chat, {
    event: (event) => {
      if (event.data === "[DONE]") return bytes(events.end());
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        // Not JSON: no chunk to translate. A stream that never finishes ends with an error event (end()).
        return [];
      }
      const chunk = ChatChunkIn.safeParse(value);
      return chunk.success ? bytes(events.push(chunk.data)) : [];
    },
    comment: () => bytes([{ type: "ping" }]),
    end: () => bytes(events.end()),
  });
}

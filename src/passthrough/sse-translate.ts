// A relayed event stream translated event by event into another wire's (messages-stream.ts, answer-as-chat.ts): the
// upstream's bytes parsed as server-sent events, each event and comment turned into the bytes the client's wire
// writes, and the stream's last bytes at its end. Read as the client reads (pulled from the relay, no pipe stage in
// between); each upstream chunk's bytes go out in one write; a client that leaves cancels the relay.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { joinBytes } from "../bytes";

export interface EventTranslation {
  event(event: EventSourceMessage): Uint8Array[];
  comment(): Uint8Array[];
  /** The source ended (whole or cut): what is still to be written. */
  end(): Uint8Array[];
}

export function translateEventStream(
  source: ReadableStream<Uint8Array>,
  translation: EventTranslation,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const decoder = new TextDecoder();
  let queue: Uint8Array[] = [];
  const parser = createParser({
    onEvent: (event) => queue.push(...translation.event(event)),
    onComment: () => queue.push(...translation.comment()),
  });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Until something is written: an upstream chunk that makes no event (half an event) must not stall the reader.
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          parser.feed(decoder.decode());
          queue.push(...translation.end());
        } else parser.feed(decoder.decode(value, { stream: true }));
        const out = queue;
        queue = [];
        if (out.length > 0) controller.enqueue(joinBytes(out));
        if (done) {
          controller.close();
          return;
        }
        if (out.length > 0) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

// Reads a byte stream of server-sent events as its events' `data` payloads, with eventsource-parser (the one
// SSE parser the project uses, here and in the passthrough's usage scanner).
import { createParser } from "eventsource-parser";

export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const ready: string[] = [];
  const parser = createParser({ onEvent: (event) => ready.push(event.data) });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
      while (ready.length > 0) yield ready.shift() ?? "";
    }
    // An event the stream ended without its blank line is still delivered, as a browser's EventSource does not;
    // a model that ends its last chunk without one is common enough.
    parser.reset({ consume: true });
    while (ready.length > 0) yield ready.shift() ?? "";
  } finally {
    reader.releaseLock();
  }
}

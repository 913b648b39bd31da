// The doors' event streams (doorEventStream): written as the client reads, and a client that goes away stops the
// turn's stream instead of leaving it to run into a closed connection.
import { describe, expect, it } from "vitest";
import { type DoorStreamItem, doorEventStream } from "../../src/agent-wire/completion";

const encoder = new TextEncoder();

function chunk(content: string): DoorStreamItem {
  return {
    kind: "chunk",
    chunk: {
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta: { content }, finish_reason: null, logprobs: null }],
    },
  };
}

describe("doorEventStream", () => {
  it("stops the door's items when the client cancels the stream", async () => {
    let stopped = false;
    async function* items(): AsyncGenerator<DoorStreamItem> {
      try {
        for (;;) yield chunk("x");
      } finally {
        stopped = true;
      }
    }
    const stream = doorEventStream(items(), {
      write: (item) => [encoder.encode(item.kind)],
      finish: () => [],
    });
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel();
    expect(stopped).toBe(true);
  });

  it("writes all of an item's events at once, so a text delta is not held behind the events that open its block", async () => {
    async function* items(): AsyncGenerator<DoorStreamItem> {
      yield chunk("a");
    }
    const stream = doorEventStream(items(), {
      write: () => [encoder.encode("open;"), encoder.encode("delta;")],
      finish: () => [],
    });
    const first = await stream.getReader().read();
    expect(new TextDecoder().decode(first.value)).toBe("open;delta;");
  });

  it("skips items that write nothing and ends with the wire's last bytes", async () => {
    async function* items(): AsyncGenerator<DoorStreamItem> {
      yield chunk("");
      yield chunk("a");
      yield chunk("");
    }
    const stream = doorEventStream(items(), {
      write: (item) => {
        const content = item.kind === "chunk" ? item.chunk.choices[0]?.delta.content : "";
        return content ? [encoder.encode(content)] : [];
      },
      finish: async () => [encoder.encode("|end")],
    });
    expect(await new Response(stream).text()).toBe("a|end");
  });
});

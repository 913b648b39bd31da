// Streamed chat completions: the upstream's SSE bytes reach the client as they are, event for event,
// tool-call fragments, comments and [DONE] included, uncompressed, with keepalives while it is silent.
import { describe, expect, it, vi } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, openai, post, sseEvents, workerWith } from "./harness";

describe("streamed POST /v1/chat/completions", () => {
  it("streams content that the SDK reassembles chunk by chunk", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "The quick brown fox jumps.", chunkSize: 5 }]);
    const stream = await openai(await newChatKey()).chat.completions.create({
      model: "gpt-test",
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const pieces: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) pieces.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    expect(pieces).toEqual(["The q", "uick ", "brown", " fox ", "jumps", "."]);
    expect(finish).toBe("stop");
  });

  it("streams a tool call whose argument fragments reassemble into the arguments", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"src/app.ts","encoding":"utf-8"}' }],
        chunkSize: 6,
      },
    ]);
    const stream = await openai(await newChatKey()).chat.completions.create({
      model: "gpt-test",
      stream: true,
      tools: [{ type: "function", function: { name: "read_file", parameters: { type: "object" } } }],
      messages: [{ role: "user", content: script.marker }],
    });
    const fragments: string[] = [];
    const names: string[] = [];
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.function?.name) names.push(call.function.name);
        if (call.function?.arguments) fragments.push(call.function.arguments);
      }
    }
    expect(names).toEqual(["read_file"]);
    expect(fragments.length).toBeGreaterThan(1);
    expect(JSON.parse(fragments.join(""))).toEqual({ path: "src/app.ts", encoding: "utf-8" });
  });

  it("relays the upstream's events byte for byte: comments, named events and [DONE] intact", async () => {
    const events = [
      ": upstream comment",
      'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}',
      'event: custom\ndata: {"x":1}',
      "data: [DONE]",
    ];
    const script = await scriptUpstream([{ type: "sse", events, end: "close" }]);
    const response = await post("/chat/completions", await newChatKey(), {
      model: "gpt-test",
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(response.status).toBe(200);
    expect(sseEvents(await response.text())).toEqual(events);
  });

  it("answers an event stream with compression switched off", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const response = await post("/chat/completions", await newChatKey(), {
      model: "gpt-test",
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    await response.arrayBuffer();
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("content-encoding")).toBe("identity");
    expect(response.headers.get("cache-control")).toBe("no-cache");
  });

  it("sends a keepalive comment while the upstream has not answered yet, then the stream", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "late", delayFirstByteMs: 600 }]);
    const through = workerWith({ PASSTHROUGH_KEEPALIVE_MS: "50" });
    const response = await post(
      "/chat/completions",
      await newChatKey(),
      { model: "gpt-test", stream: true, messages: [{ role: "user", content: script.marker }] },
      {},
      through,
    );
    expect(response.status).toBe(200);
    const events = sseEvents(await response.text());
    expect(events[0]).toBe(": keepalive");
    // 600 ms of silence at a 50 ms interval: the interval keeps firing, not only the first comment.
    const firstData = events.findIndex((e) => e.startsWith("data:"));
    expect(events.slice(0, firstData).filter((e) => e === ": keepalive").length).toBeGreaterThanOrEqual(3);
    const data = events.filter((e) => !e.startsWith(":"));
    expect(data.at(-1)).toBe("data: [DONE]");
    const content = data
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice("data: ".length)) as { choices: { delta: { content?: string } }[] })
      .map((chunk) => chunk.choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toBe("late");
    await through.settled();
  });

  it("aborts the upstream request when the client stops reading", async () => {
    const script = await scriptUpstream([
      { type: "sse", events: ['data: {"choices":[{"index":0,"delta":{"content":"a"}}]}'], end: "stall" },
    ]);
    const response = await post("/chat/completions", await newChatKey(), {
      model: "gpt-test",
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    await vi.waitFor(async () => expect((await script.requests())[0]?.disconnected).toBe(true), { timeout: 5_000 });
  });
});

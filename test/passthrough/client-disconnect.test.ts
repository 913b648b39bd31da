// A client that disconnects before the upstream's headers arrive aborts the upstream request, streamed or not
// (the Worker hears it through request.signal, the `enable_request_signal` compatibility flag).
import { describe, expect, it, vi } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, workerWith } from "./harness";

async function leaveBeforeHeaders(stream: boolean) {
  const script = await scriptUpstream([{ type: "completion", content: "late", delayFirstByteMs: 10_000 }]);
  const key = await newChatKey();
  const controller = new AbortController();
  // The app with a Request whose signal the test holds, as the runtime's request.signal is held by the
  // client's connection: aborting it is the client going away.
  const pending = workerWith()
    .fetch("http://localhost/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: script.marker }] }),
      signal: controller.signal,
    })
    .catch((error: unknown) => error);
  await vi.waitFor(async () => expect(await script.requests()).toHaveLength(1), { timeout: 5_000 });
  controller.abort();
  await pending;
  return script;
}

describe("client disconnects before the upstream answers", () => {
  it("aborts the upstream request of a non-streamed completion", async () => {
    const script = await leaveBeforeHeaders(false);
    await vi.waitFor(async () => expect((await script.requests())[0]?.disconnected).toBe(true), { timeout: 5_000 });
  });

  it("aborts the upstream request of a streamed completion", async () => {
    const script = await leaveBeforeHeaders(true);
    await vi.waitFor(async () => expect((await script.requests())[0]?.disconnected).toBe(true), { timeout: 5_000 });
  });
});

describe("client disconnects from a translated stream", () => {
  it("stops the upstream when a Messages client on a chat completions route cancels its stream", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "a long answer, slowly", chunkSize: 2, chunkDelayMs: 300 },
    ]);
    const key = await newChatKey();
    const response = await workerWith().fetch("http://localhost/v1/messages", {
      method: "POST",
      headers: { "x-api-key": key.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: script.marker }],
      }),
    });
    const reader = response.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toContain("event: message_start");
    await reader?.cancel();
    await vi.waitFor(async () => expect((await script.requests())[0]?.disconnected).toBe(true), { timeout: 5_000 });
  });
});

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

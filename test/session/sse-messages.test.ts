// POST .../messages with Accept: text/event-stream streams the same frames as the WebSocket.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

function parseSse(text: string) {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const fields = Object.fromEntries(
        block.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
      );
      return {
        id: Number(fields.id),
        event: fields.event,
        data: JSON.parse(fields.data ?? "{}") as Record<string, unknown>,
      };
    });
}

describe("SSE messages", () => {
  it("streams the turn's frames as server-sent events", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
      { type: "completion", content: "Done over SSE." },
    ]);
    const id = await createSession();
    const response = await exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
      method: "POST",
      headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ content: `greet ${script.marker}` }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = parseSse(await response.text());
    expect([...new Set(events.map((e) => e.event))]).toEqual([
      "turn_started",
      "tool_call_started",
      "tool_call_completed",
      "assistant_delta",
      "turn_completed",
    ]);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.data.response).toMatchObject({ status: "completed", text: "Done over SSE." });
  });

  it("answers a busy session with a 409 JSON error instead of a stream", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "slow", delayFirstByteMs: 400 }]);
    const id = await createSession();
    const send = (content: string) =>
      exports.default.fetch(`http://aptix.test/context/sessions/${id}/messages`, {
        method: "POST",
        headers: {
          ...authHeaders(TEST_KEYS.chat.key),
          "content-type": "application/json",
          accept: "text/event-stream",
        },
        body: JSON.stringify({ content }),
      });
    const first = send(`first ${script.marker}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await send("second");
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("session_busy");
    await (await first).text();
  });
});

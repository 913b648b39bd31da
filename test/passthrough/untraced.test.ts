// Tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT, as in this project): no trace context goes anywhere. Upstream model
// requests, the passthrough's and the agent loop's, carry no traceparent, not even the client's own.
import { describe, expect, it } from "vitest";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, post } from "./harness";

const clientTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("without tracing", () => {
  it("sends no traceparent upstream from the passthrough, the client's included", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "hi" }]);
    const response = await post(
      "/chat/completions",
      await newChatKey(),
      { model: "scripted-model", messages: [{ role: "user", content: script.marker }] },
      { traceparent: clientTraceparent },
    );
    expect(response.status).toBe(200);
    const [sent] = await script.requests();
    expect(sent?.headers.traceparent).toBeUndefined();
  });

  it("sends no traceparent with the agent loop's model calls", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "hi" }]);
    const response = await sendMessage(await createSession(), `hello ${script.marker}`);
    expect(response.status).toBe("completed");
    const [sent] = await script.requests();
    expect(sent?.headers.traceparent).toBeUndefined();
  });
});

// The passthrough's output guardrails on an event stream, event by event (src/passthrough/guardrail-stream.ts): a
// flowing stream restores a placeholder cut across deltas, a held one sends each channel's checked text once.
import { describe, expect, it } from "vitest";
import { MaskVault } from "../../src/guardrails/guardrail-check";
import { guardedEventStream } from "../../src/passthrough/guardrail-stream";
import type { GuardedDoor } from "../../src/passthrough/guardrail-texts";

const encoder = new TextEncoder();

function source(events: string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const event of events) controller.enqueue(encoder.encode(event));
      controller.close();
    },
  });
}

/** The stream through the guard, its events' data parsed (comments and [DONE] as they are). */
async function through(
  door: GuardedDoor,
  events: string[],
  options: { hold: boolean; vault: MaskVault | null; upper?: boolean },
): Promise<unknown[]> {
  const { vault } = options;
  const stream = guardedEventStream(source(events), {
    door,
    hold: options.hold,
    vault,
    channelVault: vault ? () => MaskVault.from(vault.toJSON()) : null,
    check: async (texts) => ({
      blocked: null,
      texts: new Map([...texts].map(([channel, text]) => [channel, options.upper ? text.toUpperCase() : text])),
    }),
    errorFrame: () => encoder.encode("data: error\n\n"),
    keepaliveMs: 60_000,
    done: () => {},
  });
  const text = await new Response(stream).text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((event) => {
      const data = event
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      return data.startsWith("{") ? JSON.parse(data) : event;
    });
}

const chunk = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

describe("output guardrails on a stream", () => {
  it("restores a placeholder cut across chat deltas, sending what it held before the finish chunk", async () => {
    const vault = MaskVault.from({ "[EMAIL_1]": "ada@example.com" });
    const events = [
      chunk("To [EM"),
      chunk("AIL_1] now ["),
      chunk("EMAIL_1]. ["),
      chunk("", "stop"),
      "data: [DONE]\n\n",
    ];
    const out = await through("chat", events, { hold: false, vault });
    expect(out).toEqual([
      { id: "c1", choices: [{ index: 0, delta: { content: "To " }, finish_reason: null }] },
      { id: "c1", choices: [{ index: 0, delta: { content: "ada@example.com now " }, finish_reason: null }] },
      { id: "c1", choices: [{ index: 0, delta: { content: "ada@example.com. " }, finish_reason: null }] },
      { id: "c1", choices: [{ index: 0, delta: { content: "[" }, finish_reason: null }] },
      { id: "c1", choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }] },
      "data: [DONE]",
    ]);
  });

  it("holds a Messages stream's text and sends each block's checked text in its first delta", async () => {
    const event = (value: Record<string, unknown>) =>
      `event: ${String(value.type)}\ndata: ${JSON.stringify(value)}\n\n`;
    const delta = (index: number, text: string) =>
      event({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    const events = [
      event({ type: "message_start", message: { id: "m1" } }),
      delta(0, "one "),
      delta(0, "two"),
      event({ type: "content_block_stop", index: 0 }),
      delta(1, "three"),
      event({ type: "message_stop" }),
    ];
    const out = await through("messages", events, { hold: true, vault: null, upper: true });
    expect(out).toEqual([
      { type: "message_start", message: { id: "m1" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ONE TWO" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "THREE" } },
      { type: "message_stop" },
    ]);
  });
});

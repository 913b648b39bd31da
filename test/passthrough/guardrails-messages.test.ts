// The org's guardrails on POST /v1/messages, seen by the official `@anthropic-ai/sdk`: refusals in Anthropic's
// shape (a block before the upstream, an `event: error` ending a blocked stream), a mask restored in the text
// blocks (JSON and text_delta events), an output redact, a flag counted, and nothing changed with the switch off.
// The route is `default` (the scripted OpenAI upstream, translated both ways); an anthropic route is relayed the
// same way after the guardrails (one test).
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { anthropic, toAnthropic } from "./anthropic-harness";
import { countsOf, EMAIL, EMAIL_PLACEHOLDER, guardedOrg, piiEmail } from "./guardrails-harness";

const textOf = (message: Anthropic.Message) =>
  message.content.map((block) => (block.type === "text" ? block.text : "")).join("");

async function streamed(stream: AsyncIterable<Anthropic.RawMessageStreamEvent>): Promise<string> {
  let text = "";
  for await (const event of stream) {
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
  }
  return text;
}

describe("guardrails on /v1/messages", () => {
  it("refuses a message an input guardrail blocks in Anthropic's shape and calls no upstream", async () => {
    const guarded = await guardedOrg([piiEmail("block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const error = await anthropic(guarded.key, { through: guarded.through })
      .messages.create({
        model: "claude-test",
        max_tokens: 64,
        messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
      })
      .catch((e: unknown) => e);
    expect(error instanceof Anthropic.APIError ? [error.status, error.error] : null).toEqual([
      400,
      { type: "error", error: { type: "invalid_request_error", message: expect.stringContaining('"pii"') } },
    ]);
    expect(await script.requests()).toEqual([]);
  });

  it("masks an email in a text block upstream and restores it in the answer", async () => {
    const guarded = await guardedOrg([piiEmail("mask")]);
    const script = await scriptUpstream([{ type: "completion", content: `Sent to ${EMAIL_PLACEHOLDER}.` }]);
    const message = await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: "claude-test",
      max_tokens: 64,
      messages: [{ role: "user", content: [{ type: "text", text: `Mail ${EMAIL} ${script.marker}` }] }],
    });
    expect(JSON.stringify((await script.messagesOf(0)).at(-1)?.content)).toContain(
      `Mail ${EMAIL_PLACEHOLDER} ${script.marker}`,
    );
    expect(textOf(message)).toBe(`Sent to ${EMAIL}.`);
  });

  it("restores a masked email across text_delta events", async () => {
    const guarded = await guardedOrg([piiEmail("mask")]);
    const script = await scriptUpstream([
      { type: "completion", content: `Sent to ${EMAIL_PLACEHOLDER}, and ${EMAIL_PLACEHOLDER}.`, chunkSize: 5 },
    ]);
    const stream = await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: "claude-test",
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    expect(await streamed(stream)).toBe(`Sent to ${EMAIL}, and ${EMAIL}.`);
  });

  it("redacts an email in a stream's text", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["output"])]);
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.`, chunkSize: 4 }]);
    const stream = await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: "claude-test",
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(await streamed(stream)).toBe(`Write to ${EMAIL_PLACEHOLDER}.`);
  });

  it("redacts an email in the JSON answer of an anthropic route", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["output"])]);
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "text", text: `Write to ${EMAIL}.` }] },
    ]);
    const message = await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: route,
      max_tokens: 64,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(textOf(message)).toBe(`Write to ${EMAIL_PLACEHOLDER}.`);
  });

  it("ends a stream an output guardrail blocks with an error event the SDK raises", async () => {
    const guarded = await guardedOrg([piiEmail("block", ["output"])]);
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.`, chunkSize: 4 }]);
    const stream = await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: "claude-test",
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const error = await streamed(stream).catch((e: unknown) => e);
    expect(error instanceof Anthropic.APIError ? error.error : null).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringContaining('"pii"') },
    });
  });

  it("counts an input flag and sends the text upstream unchanged", async () => {
    const guarded = await guardedOrg([piiEmail("flag")], { counted: true });
    const script = await scriptUpstream([{ type: "completion", content: "Sent." }]);
    await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: "claude-test",
      max_tokens: 64,
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    expect((await script.messagesOf(0)).at(-1)?.content).toBe(`Mail ${EMAIL} ${script.marker}`);
    expect(await countsOf(guarded)).toEqual([{ guardrail: "pii", point: "input", action: "flag", count: 1 }]);
  });

  it("leaves the message untouched when the passthrough switch is off", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["input", "output"])], { passthrough: false });
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.` }]);
    const message = await anthropic(guarded.key, { through: guarded.through }).messages.create({
      model: "claude-test",
      max_tokens: 64,
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    expect((await script.messagesOf(0)).at(-1)?.content).toBe(`Mail ${EMAIL} ${script.marker}`);
    expect(textOf(message)).toBe(`Write to ${EMAIL}.`);
  });
});

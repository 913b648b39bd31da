// The org's guardrails on POST /v1/chat/completions, seen by the official `openai` client: an input block sends
// nothing upstream, a mask sends the placeholder and answers the value, an output redact or block applies to JSON
// and to streams (a block mid-stream ends it with an error event the SDK raises), a flag is counted, and with the
// passthrough switch off the prompt goes upstream untouched.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { countsOf, EMAIL, EMAIL_PLACEHOLDER, guardedOrg, piiEmail } from "./guardrails-harness";
import { openai } from "./harness";

async function streamed(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  return text;
}

describe("guardrails on /v1/chat/completions", () => {
  it("refuses a message an input guardrail blocks, naming it, and calls no upstream", async () => {
    const guarded = await guardedOrg([piiEmail("block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const error = await openai(guarded.key, guarded.through)
      .chat.completions.create({
        model: "scripted-model",
        messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
      })
      .catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? [error.status, error.code, error.type] : null).toEqual([
      400,
      "guardrail_blocked",
      "invalid_request_error",
    ]);
    expect(error instanceof OpenAI.APIError ? error.message : "").toContain('"pii"');
    expect(await script.requests()).toEqual([]);
  });

  it("names the field of the message it blocked in param, a text part's too", async () => {
    const guarded = await guardedOrg([piiEmail("block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const error = await openai(guarded.key, guarded.through)
      .chat.completions.create({
        model: "scripted-model",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: `hello ${script.marker}` },
          { role: "assistant", content: "Hi." },
          {
            role: "user",
            content: [
              { type: "text", text: "Here:" },
              { type: "text", text: `Mail ${EMAIL}` },
            ],
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? [error.code, error.param] : null).toEqual([
      "guardrail_blocked",
      "messages.3.content.1.text",
    ]);
  });

  it("masks an email before the upstream and restores it in the JSON answer", async () => {
    const guarded = await guardedOrg([piiEmail("mask")]);
    const script = await scriptUpstream([{ type: "echo" }]);
    const answer = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    const [sent] = await script.messagesOf(0);
    expect(sent?.content).toBe(`Mail ${EMAIL_PLACEHOLDER} ${script.marker}`);
    expect(answer.choices[0]?.message.content).toBe(`Mail ${EMAIL} ${script.marker}`);
  });

  it("restores a masked email cut across stream deltas", async () => {
    const guarded = await guardedOrg([piiEmail("mask")]);
    const script = await scriptUpstream([{ type: "echo" }]);
    const stream = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      stream: true,
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    expect(await streamed(stream)).toBe(`Mail ${EMAIL} ${script.marker}`);
    expect((await script.messagesOf(0))[0]?.content).toBe(`Mail ${EMAIL_PLACEHOLDER} ${script.marker}`);
  });

  it("redacts an email in the JSON answer", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["output"])]);
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.` }]);
    const answer = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      messages: [{ role: "user", content: script.marker }],
    });
    expect(answer.choices[0]?.message.content).toBe(`Write to ${EMAIL_PLACEHOLDER}.`);
  });

  it("redacts an email in a stream's assembled text, the deltas held until it is checked", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["output"])]);
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.`, chunkSize: 4 }]);
    const stream = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    expect(await streamed(stream)).toBe(`Write to ${EMAIL_PLACEHOLDER}.`);
  });

  it("ends a stream an output guardrail blocks with an error event the SDK raises, no text of it sent", async () => {
    const guarded = await guardedOrg([piiEmail("block", ["output"])]);
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.`, chunkSize: 4 }]);
    const stream = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      stream: true,
      messages: [{ role: "user", content: script.marker }],
    });
    const pieces: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? error.code : null).toBe("guardrail_blocked");
    expect(pieces.join("")).toBe("");
  });

  it("answers a JSON answer an output guardrail blocks with the refusal", async () => {
    const guarded = await guardedOrg([piiEmail("block", ["output"])]);
    const script = await scriptUpstream([{ type: "completion", content: `Write to ${EMAIL}.` }]);
    const error = await openai(guarded.key, guarded.through)
      .chat.completions.create({ model: "scripted-model", messages: [{ role: "user", content: script.marker }] })
      .catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? [error.status, error.code] : null).toEqual([400, "guardrail_blocked"]);
  });

  it("counts a flag and passes the text on unchanged", async () => {
    const guarded = await guardedOrg([piiEmail("flag", ["input", "output"])], { counted: true });
    const script = await scriptUpstream([{ type: "echo" }]);
    const answer = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    expect(answer.choices[0]?.message.content).toBe(`Mail ${EMAIL} ${script.marker}`);
    expect(await countsOf(guarded)).toEqual([
      { guardrail: "pii", point: "input", action: "flag", count: 1 },
      { guardrail: "pii", point: "output", action: "flag", count: 1 },
    ]);
  });

  it("leaves the prompt untouched when the org's passthrough switch is off", async () => {
    const guarded = await guardedOrg([piiEmail("block"), piiEmail("redact", ["output"])], { passthrough: false });
    const script = await scriptUpstream([{ type: "echo" }]);
    const answer = await openai(guarded.key, guarded.through).chat.completions.create({
      model: "scripted-model",
      messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }],
    });
    expect((await script.messagesOf(0))[0]?.content).toBe(`Mail ${EMAIL} ${script.marker}`);
    expect(answer.choices[0]?.message.content).toBe(`Mail ${EMAIL} ${script.marker}`);
  });
});

// The org's guardrails on POST /v1/responses, seen by the official `openai` client: its `input` checked before the
// upstream (block, mask), the answer's `output_text` parts checked (JSON and the event stream, whose whole-text
// events carry the checked text too), a flag counted, and nothing changed with the passthrough switch off.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { countsOf, EMAIL, EMAIL_PLACEHOLDER, guardedOrg, piiEmail } from "./guardrails-harness";
import { openai } from "./harness";

/** A Responses API answer whose one message says `text`. */
function answerOf(text: string) {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-r",
    output: [
      {
        type: "message",
        id: "msg_1",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      },
    ],
  };
}

/** The Responses event stream of `text` in deltas of `size` characters, ending with `response.completed`. */
function eventsOf(text: string, size = 4): string[] {
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  const event = (value: Record<string, unknown>) => `event: ${String(value.type)}\ndata: ${JSON.stringify(value)}`;
  const deltas: string[] = [];
  for (let i = 0; i < text.length; i += size) {
    deltas.push(event({ type: "response.output_text.delta", ...at, delta: text.slice(i, i + size) }));
  }
  return [
    event({ type: "response.created", response: { ...answerOf(""), status: "in_progress", output: [] } }),
    ...deltas,
    event({ type: "response.output_text.done", ...at, text }),
    event({ type: "response.completed", response: answerOf(text) }),
  ];
}

/** The text of a response's messages, as the event carries it (a stream's events have no `output_text`). */
function textOf(response: OpenAI.Responses.Response): string {
  return response.output
    .flatMap((item) => (item.type === "message" ? item.content : []))
    .map((part) => (part.type === "output_text" ? part.text : ""))
    .join("");
}

interface Streamed {
  deltas: string;
  completed: string | null;
}

async function read(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>): Promise<Streamed> {
  const out: Streamed = { deltas: "", completed: null };
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") out.deltas += event.delta;
    if (event.type === "response.completed") out.completed = textOf(event.response);
  }
  return out;
}

describe("guardrails on /v1/responses", () => {
  it("refuses an input an input guardrail blocks and calls no upstream", async () => {
    const guarded = await guardedOrg([piiEmail("block")]);
    const script = await scriptUpstream([{ type: "json", body: answerOf("never") }]);
    const error = await openai(guarded.key, guarded.through)
      .responses.create({ model: "gpt-r", input: `Mail ${EMAIL} ${script.marker}` })
      .catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? [error.status, error.code, error.param] : null).toEqual([
      400,
      "guardrail_blocked",
      "input",
    ]);
    expect(await script.requests()).toEqual([]);
  });

  it("masks an input item's email upstream and restores the answer's placeholder", async () => {
    const guarded = await guardedOrg([piiEmail("mask")]);
    const script = await scriptUpstream([{ type: "json", body: answerOf(`Sent to ${EMAIL_PLACEHOLDER}.`) }]);
    const result = await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      input: [{ role: "user", content: [{ type: "input_text", text: `Mail ${EMAIL} ${script.marker}` }] }],
    });
    const [sent] = await script.bodies();
    expect(sent?.input).toEqual([
      { role: "user", content: [{ type: "input_text", text: `Mail ${EMAIL_PLACEHOLDER} ${script.marker}` }] },
    ]);
    expect(result.output_text).toBe(`Sent to ${EMAIL}.`);
  });

  it("restores a masked email in a stream's deltas and its completed response", async () => {
    const guarded = await guardedOrg([piiEmail("mask")]);
    const script = await scriptUpstream([
      { type: "sse", events: eventsOf(`Sent to ${EMAIL_PLACEHOLDER}.`), end: "close" },
    ]);
    const stream = await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      stream: true,
      input: `Mail ${EMAIL} ${script.marker}`,
    });
    expect(await read(stream)).toEqual({ deltas: `Sent to ${EMAIL}.`, completed: `Sent to ${EMAIL}.` });
  });

  it("redacts an email in the JSON answer", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["output"])]);
    const script = await scriptUpstream([{ type: "json", body: answerOf(`Write to ${EMAIL}.`) }]);
    const result = await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      input: script.marker,
    });
    expect(result.output_text).toBe(`Write to ${EMAIL_PLACEHOLDER}.`);
  });

  it("redacts an email in a stream: the deltas and the whole-text events carry the redacted text", async () => {
    const guarded = await guardedOrg([piiEmail("redact", ["output"])]);
    const script = await scriptUpstream([{ type: "sse", events: eventsOf(`Write to ${EMAIL}.`), end: "close" }]);
    const stream = await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      stream: true,
      input: script.marker,
    });
    const redacted = `Write to ${EMAIL_PLACEHOLDER}.`;
    expect(await read(stream)).toEqual({ deltas: redacted, completed: redacted });
  });

  it("ends a stream an output guardrail blocks with an error the SDK raises", async () => {
    const guarded = await guardedOrg([piiEmail("block", ["output"])]);
    const script = await scriptUpstream([{ type: "sse", events: eventsOf(`Write to ${EMAIL}.`), end: "close" }]);
    const stream = await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      stream: true,
      input: script.marker,
    });
    const error = await read(stream).catch((e: unknown) => e);
    expect(error instanceof OpenAI.APIError ? error.code : null).toBe("guardrail_blocked");
  });

  it("counts an output flag", async () => {
    const guarded = await guardedOrg([piiEmail("flag", ["output"])], { counted: true });
    const script = await scriptUpstream([{ type: "json", body: answerOf(`Write to ${EMAIL}.`) }]);
    const result = await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      input: script.marker,
    });
    expect(result.output_text).toBe(`Write to ${EMAIL}.`);
    expect(await countsOf(guarded)).toEqual([{ guardrail: "pii", point: "output", action: "flag", count: 1 }]);
  });

  it("sends the input untouched when the passthrough switch is off", async () => {
    const guarded = await guardedOrg([piiEmail("mask")], { passthrough: false });
    const script = await scriptUpstream([{ type: "json", body: answerOf("ok") }]);
    await openai(guarded.key, guarded.through).responses.create({
      model: "gpt-r",
      input: `Mail ${EMAIL} ${script.marker}`,
    });
    expect((await script.bodies())[0]?.input).toBe(`Mail ${EMAIL} ${script.marker}`);
  });
});

// /v1/completions, /v1/embeddings and /v1/responses are forwarded the same raw way as chat completions:
// same bytes upstream at the same path, the upstream's answer back through the official SDK.
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, openai } from "./harness";

describe("raw forwarding of the other /v1 endpoints", () => {
  it("forwards POST /v1/embeddings and returns the vectors", async () => {
    const answer = {
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0.25, -0.5] }],
      model: "emb-test",
      usage: { prompt_tokens: 3, total_tokens: 3 },
    };
    const script = await scriptUpstream([{ type: "json", body: answer }]);
    const result = await openai(await newChatKey()).embeddings.create({
      model: "emb-test",
      input: `hello ${script.marker}`,
      encoding_format: "float",
    });
    expect(result.data[0]?.embedding).toEqual([0.25, -0.5]);
    const [received] = await script.requests();
    expect(received?.path).toBe("/v1/embeddings");
    expect(JSON.parse(received?.body ?? "")).toEqual({
      model: "emb-test",
      input: `hello ${script.marker}`,
      encoding_format: "float",
    });
  });

  it("forwards POST /v1/completions and returns the text", async () => {
    const answer = {
      id: "cmpl-1",
      object: "text_completion",
      created: 1,
      model: "davinci-test",
      choices: [{ index: 0, text: "world", finish_reason: "stop", logprobs: null }],
    };
    const script = await scriptUpstream([{ type: "json", body: answer }]);
    const result = await openai(await newChatKey()).completions.create({
      model: "davinci-test",
      prompt: `hello ${script.marker}`,
    });
    expect(result.choices[0]?.text).toBe("world");
    expect((await script.requests())[0]?.path).toBe("/v1/completions");
  });

  it("forwards POST /v1/responses and returns the response", async () => {
    const answer = {
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
          content: [{ type: "output_text", text: "Hi there.", annotations: [] }],
        },
      ],
    };
    const script = await scriptUpstream([{ type: "json", body: answer }]);
    const result = await openai(await newChatKey()).responses.create({ model: "gpt-r", input: script.marker });
    expect(result.output_text).toBe("Hi there.");
    expect((await script.requests())[0]?.path).toBe("/v1/responses");
  });
});

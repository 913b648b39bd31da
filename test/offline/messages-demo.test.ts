// With no LLM_BASE_URL (what `npm start` runs), the Messages wire reaches the offline demo model too: the official
// `@anthropic-ai/sdk` gets its answers and its tool calls, whole and streamed.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { DEMO_MODEL_ID } from "../../src/llm/demo-openai-upstream";
import { newChatKey, type TestKey, worker, workerWith } from "../passthrough/harness";
import { OFFLINE_MODEL_CALL_LIMIT } from "./limit";
import { awayFromWindowEdge } from "./window";

async function client(): Promise<Anthropic> {
  const through = workerWith({ LLM_BASE_URL: "" });
  return new Anthropic({
    apiKey: (await newChatKey()).key,
    baseURL: "http://localhost",
    maxRetries: 0,
    fetch: (input, init) => through.fetch(input, init),
  });
}

describe("POST /v1/messages without an upstream (the offline demo)", () => {
  it("answers messages.create with the demo's text and usage", async () => {
    const message = await (await client()).messages.create({
      model: DEMO_MODEL_ID,
      max_tokens: 256,
      messages: [{ role: "user", content: "What can you do?" }],
    });
    expect(message.content[0]?.type === "text" ? message.content[0].text : "").toContain("[offline demo model]");
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it("calls an offered tool as a tool_use block", async () => {
    const message = await (await client()).messages.create({
      model: DEMO_MODEL_ID,
      max_tokens: 256,
      tools: [
        {
          name: "agent_hello_world",
          description: "Greets someone.",
          input_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      ],
      messages: [{ role: "user", content: "Say hello to Dana" }],
    });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.find((block) => block.type === "tool_use")).toMatchObject({
      name: "agent_hello_world",
      input: { name: "Dana" },
    });
  });

  it("streams the demo's answer with messages.stream", async () => {
    const message = await (await client()).messages
      .stream({ model: DEMO_MODEL_ID, max_tokens: 256, messages: [{ role: "user", content: "What can you do?" }] })
      .finalMessage();
    expect(message.content[0]?.type === "text" ? message.content[0].text : "").toMatch(/^\[offline demo model\]/);
    expect(message.stop_reason).toBe("end_turn");
  });

  it("answers a key past its model call limit with the SDK's RateLimitError in Anthropic's shape, with Retry-After", async () => {
    await awayFromWindowEdge();
    const key: TestKey = await newChatKey();
    for (let i = 0; i < OFFLINE_MODEL_CALL_LIMIT; i++) {
      const response = await worker.fetch("http://localhost/v1/models", { headers: { "x-api-key": key.key } });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const error = await new Anthropic({
      apiKey: key.key,
      baseURL: "http://localhost",
      maxRetries: 0,
      fetch: (input, init) => worker.fetch(input, init),
    }).messages
      .create({ model: DEMO_MODEL_ID, max_tokens: 16, messages: [{ role: "user", content: "Hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(error instanceof Anthropic.APIError ? [error.error, error.headers?.get("retry-after")] : null).toEqual([
      { type: "error", error: { type: "rate_limit_error", message: expect.stringContaining("Rate limit reached") } },
      "60",
    ]);
    // Longer than the default 5 s: awayFromWindowEdge alone may wait up to 8 s for the next minute's window.
  }, 15_000);
});

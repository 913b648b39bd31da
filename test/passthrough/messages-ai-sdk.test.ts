// The AI SDK's Anthropic provider on the Messages wire: generateText with a tool runs two steps (the tool call,
// then the answer to its result) against a chat completions route.
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, worker } from "./harness";

describe("POST /v1/messages for the AI SDK's Anthropic provider", () => {
  it("runs generateText with a tool over two steps: the tool call, then the answer to its result", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ id: "call_w", name: "weather", arguments: '{"city":"Lima"}' }] },
      { type: "completion", content: "Lima is 19 C." },
    ]);
    const anthropic = createAnthropic({
      baseURL: "http://localhost/v1",
      apiKey: (await newChatKey()).key,
      fetch: (input, init) => worker.fetch(input, init),
    });
    const cities: string[] = [];
    const result = await generateText({
      model: anthropic("claude-test"),
      maxRetries: 0,
      prompt: `Weather in Lima? ${script.marker}`,
      tools: {
        weather: tool({
          description: "The weather in a city.",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            cities.push(city);
            return { city, celsius: 19 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(cities).toEqual(["Lima"]);
    expect(result.steps.map((step) => step.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(result.text).toBe("Lima is 19 C.");
    const sent = (await script.bodies())[1]?.messages;
    expect(Array.isArray(sent) ? sent.at(-1) : null).toEqual({
      role: "tool",
      tool_call_id: "call_w",
      content: JSON.stringify({ city: "Lima", celsius: 19 }),
    });
  });
});

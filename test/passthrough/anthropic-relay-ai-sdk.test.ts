// The AI SDK's Anthropic provider on an `anthropic` model route: generateText with a tool runs two steps (the tool
// call, then the answer to its result), each request relayed to the scripted Anthropic upstream as the SDK sent it.
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptAnthropic } from "../fixtures/upstream";
import { toAnthropic } from "./anthropic-harness";
import { newChatKey, worker } from "./harness";

describe("POST /v1/messages on an anthropic route for the AI SDK's Anthropic provider", () => {
  it("runs generateText with a tool over two steps, the tool's result relayed as a tool_result block", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "tool_use", id: "toolu_w", name: "weather", input: { city: "Lima" } }] },
      { type: "message", content: [{ type: "text", text: "Lima is 19 C." }] },
    ]);
    const anthropic = createAnthropic({
      baseURL: "http://localhost/v1",
      apiKey: (await newChatKey()).key,
      fetch: (input, init) => worker.fetch(input, init),
    });
    const cities: string[] = [];
    const result = await generateText({
      model: anthropic(route),
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
    expect([cities, result.steps.map((step) => step.finishReason), result.text]).toEqual([
      ["Lima"],
      ["tool-calls", "stop"],
      "Lima is 19 C.",
    ]);
    const second = (await script.bodies())[1] as { model: string; messages: { content: unknown }[] } | undefined;
    expect(second?.model).toBe("claude-test");
    expect(second?.messages.at(-1)?.content).toEqual([
      expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_w" }),
    ]);
  });
});

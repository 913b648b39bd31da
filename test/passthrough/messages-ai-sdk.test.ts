// The AI SDK's Anthropic provider on the Messages wire: generateText with a tool runs two steps (the tool call, then
// the answer to its result), translated to a chat completions route, and relayed as the SDK sent it to an
// `anthropic` route.
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { toAnthropic } from "./anthropic-harness";
import { newChatKey, worker } from "./harness";

/** The SDK asks `model` for the weather in Lima (its marker in the prompt), running the weather tool itself. */
async function weatherInLima(model: string, marker: string) {
  const anthropic = createAnthropic({
    baseURL: "http://localhost/v1",
    apiKey: (await newChatKey()).key,
    fetch: (input, init) => worker.fetch(input, init),
  });
  const cities: string[] = [];
  const result = await generateText({
    model: anthropic(model),
    maxRetries: 0,
    prompt: `Weather in Lima? ${marker}`,
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
  return { cities, finishes: result.steps.map((step) => step.finishReason), text: result.text };
}

describe("POST /v1/messages for the AI SDK's Anthropic provider", () => {
  it("runs generateText with a tool over two steps on a chat completions route", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ id: "call_w", name: "weather", arguments: '{"city":"Lima"}' }] },
      { type: "completion", content: "Lima is 19 C." },
    ]);
    const result = await weatherInLima("claude-test", script.marker);
    expect(result).toEqual({ cities: ["Lima"], finishes: ["tool-calls", "stop"], text: "Lima is 19 C." });
    const sent = (await script.bodies())[1]?.messages;
    expect(Array.isArray(sent) ? sent.at(-1) : null).toEqual({
      role: "tool",
      tool_call_id: "call_w",
      content: JSON.stringify({ city: "Lima", celsius: 19 }),
    });
  });

  it("runs generateText with a tool over two steps on an anthropic route, the result relayed as a tool_result block", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([
      { type: "message", content: [{ type: "tool_use", id: "toolu_w", name: "weather", input: { city: "Lima" } }] },
      { type: "message", content: [{ type: "text", text: "Lima is 19 C." }] },
    ]);
    const result = await weatherInLima(route, script.marker);
    expect(result).toEqual({ cities: ["Lima"], finishes: ["tool-calls", "stop"], text: "Lima is 19 C." });
    const second = (await script.bodies())[1] as { model: string; messages: { content: unknown }[] } | undefined;
    expect(second?.model).toBe("claude-test");
    expect(second?.messages.at(-1)?.content).toEqual([
      expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_w" }),
    ]);
  });
});

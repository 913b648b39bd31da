// The offline demo model calls a tool asked for in plain words, by its name's words or its description's subject,
// as a real model would; unrelated words, a tie or a built-in tool's own phrasing call nothing new.
import { describe, expect, it } from "vitest";
import { DemoChatModel } from "../../src/llm/demo-model";
import { toolForPlainWords } from "../../src/llm/demo-tool-words";
import type { ChatTool } from "../../src/wire/openai";

const tool = (name: string, description: string, properties: Record<string, unknown> = {}): ChatTool => ({
  type: "function",
  function: {
    name,
    description,
    parameters: { type: "object", properties, required: Object.keys(properties) },
  },
});

const weather = tool("get_weather", "The weather in a city.", { city: { type: "string" } });
const words = tool("text_word_count", "Counts the words and characters in a piece of text.", {
  text: { type: "string" },
});
const sum = tool("everything__get_sum", "Returns the sum of two numbers", {
  a: { type: "number" },
  b: { type: "number" },
});
const hello = tool("agent_hello_world", "Creates a friendly greeting using the user's name.", {
  name: { type: "string" },
});

/** The demo's one tool call for `said` with `tools` offered, or its text when it calls none. */
async function demoAnswer(tools: ChatTool[], said: string) {
  const response = await new DemoChatModel(0).complete({ messages: [{ role: "user", content: said }], tools });
  const [call] = response.toolCalls;
  return call ? { tool: call.name, args: JSON.parse(call.arguments) } : { text: response.content };
}

describe("the demo model's plain words", () => {
  it("calls the tool whose name's words the message says, with the place it names", async () => {
    expect(await demoAnswer([words, weather], "look up the weather in Paris")).toEqual({
      tool: "get_weather",
      args: { city: "Paris" },
    });
  });

  it("calls the tool whose description's subject the message names", async () => {
    const stations = tool("geo_lookup", "The nearest railway station to an address.", {
      address: { type: "string" },
    });
    expect(
      await demoAnswer([weather, words, stations], 'which railway station is nearest to "221B Baker Street"?'),
    ).toEqual({
      tool: "geo_lookup",
      args: { address: "221B Baker Street" },
    });
  });

  it("fills an MCP tool's number fields from the numbers in the message", async () => {
    expect(await demoAnswer([weather, sum], "what is the sum of 2 and 40?")).toEqual({
      tool: "everything__get_sum",
      args: { a: 2, b: 40 },
    });
  });

  it("calls no tool when the message shares no meaningful word with any", async () => {
    const answer = await demoAnswer([weather, words, sum], "what is the capital of France?");
    expect(answer).toEqual({ text: expect.stringMatching(/^\[offline demo model\] I am the offline demo model/) });
  });

  it("calls neither of two tools that match the message equally well", () => {
    const rain = tool("rain_forecast", "The rain expected in a city.");
    const snow = tool("snow_forecast", "The snow expected in a city.");
    expect(toolForPlainWords([rain, snow], "what is the forecast for Oslo?")).toBeNull();
  });

  it("leaves a built-in tool to its own phrasing: a greeting still takes the name it is given", async () => {
    expect(await demoAnswer([hello, weather], "say hello to Ada")).toEqual({
      tool: "agent_hello_world",
      args: { name: "Ada" },
    });
  });
});

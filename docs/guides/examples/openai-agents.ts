// An OpenAI Agents SDK agent whose model is the aptix agent, with a function tool of its own: the aptix agent
// asks for the tool, the SDK runs it here and sends the result back, and the aptix agent answers with it.
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import type { Aptix } from "./aptix.ts";

const getWeather = tool({
  name: "get_weather",
  description: "The weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, sky: "sunny", celsius: 24 }),
});

export async function main({ url, key, fetch }: Aptix): Promise<string> {
  // The SDK sends its traces to OpenAI's dashboard unless told not to.
  setTracingDisabled(true);
  const client = new OpenAI({ baseURL: `${url}/agent/v1`, apiKey: key, fetch });
  const agent = new Agent({
    name: "Weather desk",
    instructions: "Answer questions about the weather with get_weather.",
    model: new OpenAIChatCompletionsModel(client, "aptix-agent/general"),
    tools: [getWeather],
  });
  const result = await run(agent, "look up the weather in Paris");
  return String(result.finalOutput);
}

// The agent's OpenAI door driven by SDKs no one here wrote: the Vercel AI SDK (`ai` with
// `@ai-sdk/openai-compatible`), whose tool runs in the client over several steps, and the OpenAI Agents SDK
// running an agent with a function tool on its chat completions model.

import { exports } from "cloudflare:workers";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Agent, tool as agentTool, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents";
import { generateText, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";

const fetchWorker = (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(input, init);
const BASE_URL = "http://aptix.test/agent/v1";

const provider = createOpenAICompatible({
  name: "aptix",
  baseURL: BASE_URL,
  apiKey: TEST_KEYS.chat.key,
  fetch: fetchWorker,
  includeUsage: true,
});

/** The scripted model asks for the weather in Paris, then answers with what the tool said. */
function weatherScript() {
  return scriptUpstream([
    { type: "completion", toolCalls: [{ name: "get_weather", arguments: '{"city": "Paris"}' }] },
    { type: "completion", content: "It is sunny in Paris." },
  ]);
}

const cities: string[] = [];
const getWeather = tool({
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string().describe("The city.") }),
  execute: async ({ city }) => {
    cities.push(city);
    return { city, sky: "sunny" };
  },
});

describe("/agent/v1 with the Vercel AI SDK", () => {
  it("generateText runs the client's tool locally and gets the agent's answer over two steps", async () => {
    const script = await weatherScript();
    const result = await generateText({
      model: provider.chatModel("aptix-agent/general"),
      prompt: `weather in Paris? ${script.marker}`,
      tools: { get_weather: getWeather },
      stopWhen: stepCountIs(4),
    });
    expect(result.text).toBe("It is sunny in Paris.");
    expect(result.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(cities).toContain("Paris");
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(JSON.parse(toolMessage?.content ?? "null")).toMatchObject({ city: "Paris", sky: "sunny" });
  });

  it("streamText streams the answer after the client's tool ran", async () => {
    const script = await weatherScript();
    const result = streamText({
      model: provider.chatModel("aptix-agent/general"),
      prompt: `weather in Paris? ${script.marker}`,
      tools: { get_weather: getWeather },
      stopWhen: stepCountIs(4),
    });
    let text = "";
    for await (const piece of result.textStream) text += piece;
    expect(text).toBe("It is sunny in Paris.");
    expect((await result.steps).length).toBe(2);
  });
});

describe("/agent/v1 with the OpenAI Agents SDK", () => {
  // No traces sent to OpenAI from a test.
  setTracingDisabled(true);

  it("runs an agent whose function tool the SDK calls, on the chat completions model", async () => {
    const script = await weatherScript();
    const client = new OpenAI({ apiKey: TEST_KEYS.chat.key, baseURL: BASE_URL, maxRetries: 0, fetch: fetchWorker });
    const agent = new Agent({
      name: "Weather",
      instructions: "Answer weather questions.",
      model: new OpenAIChatCompletionsModel(client, "aptix-agent/general"),
      tools: [
        agentTool({
          name: "get_weather",
          description: "The weather in a city.",
          parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => `sunny in ${city}`,
        }),
      ],
    });
    const result = await run(agent, `weather in Paris? ${script.marker}`);
    expect(result.finalOutput).toBe("It is sunny in Paris.");
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toBe('"sunny in Paris"');
  });
});

// docs/agent-openai.md's /agent/v1 transcript, as `npm start` serves it: the official openai client pointed at the
// agent's OpenAI door, chatting with the Workspace agent (the offline demo model) including a tool of the
// client's own, carried out by the client; and the OpenAI Agents SDK on its default model (the Responses API).
import { exports } from "cloudflare:workers";
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { newChatKey } from "../passthrough/harness";

describe("docs/agent-openai.md's /agent/v1 transcript", () => {
  it("chats with the workspace agent, which calls the client's own tool and answers with its result", async () => {
    const key = await newChatKey();
    const client = new OpenAI({
      apiKey: key.key,
      baseURL: "http://localhost/agent/v1",
      maxRetries: 0,
      fetch: (input, init) => exports.default.fetch(input, init),
    });
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "The weather in a city.",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: "use get_weather for Paris" },
    ];
    const first = await client.chat.completions.create({ model: "aptix-agent/workspace", messages, tools });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type === "function" ? [call.id, call.function.name, call.function.arguments] : null).toEqual([
      "demo_call_1",
      "get_weather",
      '{"city":"Paris"}',
    ]);
    if (!choice || !call) throw new Error("no tool call");
    messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: '{"sky":"sunny","celsius":24}' });
    const second = await client.chat.completions.create({ model: "aptix-agent/workspace", messages, tools });
    expect(second.choices[0]?.message.content).toBe(
      '[offline demo model] The tool get_weather answered: {"sky":"sunny","celsius":24}',
    );
  });
});

describe("docs/agent-openai.md's Agents SDK transcript", () => {
  // No traces sent to OpenAI from a test.
  setTracingDisabled(true);

  it("runs an agent on its default model (the Responses API) whose function tool the SDK calls", async () => {
    const key = await newChatKey();
    setDefaultOpenAIClient(
      new OpenAI({
        apiKey: key.key,
        baseURL: "http://localhost/agent/v1",
        maxRetries: 0,
        fetch: (input, init) => exports.default.fetch(input, init),
      }),
    );
    const agent = new Agent({
      name: "Weather",
      instructions: "Answer weather questions.",
      model: "aptix-agent/workspace",
      tools: [
        tool({
          name: "get_weather",
          description: "The weather in a city.",
          parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, sky: "sunny" }),
        }),
      ],
    });
    const result = await run(agent, "use get_weather for Paris");
    expect(result.finalOutput).toBe(
      '[offline demo model] The tool get_weather answered: {"city":"Paris","sky":"sunny"}',
    );
  });
});

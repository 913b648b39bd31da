// The agent on the Messages wire as `npm start` serves it: the official `@anthropic-ai/sdk` (base URL <host>/agent)
// chatting with the Workspace agent (the offline demo model), which calls the client's own tool as a tool_use block
// and answers with its tool_result.
import { exports } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { newChatKey } from "../passthrough/harness";

describe("POST /agent/v1/messages without an upstream (the offline demo)", () => {
  it("runs a client tool round trip with the workspace agent", async () => {
    const client = new Anthropic({
      apiKey: (await newChatKey()).key,
      baseURL: "http://localhost/agent",
      maxRetries: 0,
      fetch: (input, init) => exports.default.fetch(input, init),
    });
    const tools: Anthropic.Tool[] = [
      {
        name: "get_weather",
        description: "The weather in a city.",
        input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      },
    ];
    const ask: Anthropic.MessageParam = { role: "user", content: "use get_weather for Paris" };
    const first = await client.messages.create({
      model: "aptix-agent/workspace",
      max_tokens: 256,
      tools,
      messages: [ask],
    });
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content.find((block) => block.type === "tool_use");
    expect(call).toMatchObject({ type: "tool_use", id: "demo_call_1", name: "get_weather", input: { city: "Paris" } });
    if (call?.type !== "tool_use") throw new Error("no tool_use block");
    const second = await client.messages.create({
      model: "aptix-agent/workspace",
      max_tokens: 256,
      tools,
      messages: [
        ask,
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: call.id, content: '{"sky":"sunny","celsius":24}' }],
        },
      ],
    });
    expect(second.content).toEqual([
      { type: "text", text: '[offline demo model] The tool get_weather answered: {"sky":"sunny","celsius":24}' },
    ]);
  });
});

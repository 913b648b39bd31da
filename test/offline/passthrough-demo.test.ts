// With no LLM_BASE_URL (what `npm start` runs), the passthrough forwards to the offline demo model's
// OpenAI-compatible face: the `openai` SDK lists it, gets answers and tool calls, plain and streamed.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, tool } from "ai";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DEMO_MODEL_ID } from "../../src/llm/demo-openai-upstream";
import { type ErrorBody, newChatKey, openai, post, workerWith } from "../passthrough/harness";

const offline = () => workerWith({ LLM_BASE_URL: "" });
const helloTool = {
  type: "function" as const,
  function: {
    name: "agent_hello_world",
    description: "Greets someone.",
    parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
};

describe("the passthrough without an upstream (the offline demo)", () => {
  it("lists the demo model", async () => {
    const models = await openai(await newChatKey(), offline()).models.list();
    expect(models.data.map((m) => m.id)).toEqual([DEMO_MODEL_ID]);
  });

  it("answers a plain completion, saying it is the demo, with usage", async () => {
    const completion = await openai(await newChatKey(), offline()).chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "What can you do?" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toContain("[offline demo model]");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("calls an offered tool, and sums up the tool's result on the next request", async () => {
    const client = openai(await newChatKey(), offline());
    const first = await client.chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "Say hello to Dana" }],
      tools: [helloTool],
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" ? [call.function.name, JSON.parse(call.function.arguments)] : null).toEqual([
      "agent_hello_world",
      { name: "Dana" },
    ]);
    const second = await client.chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [
        { role: "user", content: "Say hello to Dana" },
        { role: "assistant", content: null, tool_calls: first.choices[0]?.message.tool_calls },
        { role: "tool", tool_call_id: call?.id ?? "", content: JSON.stringify({ message: "Hello, Dana!" }) },
      ],
      tools: [helloTool],
    });
    expect(second.choices[0]?.message.content).toBe("[offline demo model] Hello, Dana!");
  });

  it("streams an answer whose chunks add up to the whole text, ending with a usage chunk", async () => {
    const stream = await openai(await newChatKey(), offline()).chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "What can you do?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let usage = 0;
    for await (const chunk of stream) {
      pieces.push(chunk.choices[0]?.delta.content ?? "");
      usage = chunk.usage?.total_tokens ?? usage;
    }
    expect(pieces.filter(Boolean).length).toBeGreaterThan(2);
    expect(pieces.join("")).toMatch(/^\[offline demo model\] I am the offline demo model/);
    expect(usage).toBeGreaterThan(0);
  });

  it("streams a tool call whose argument fragments add up to the arguments", async () => {
    const stream = await openai(await newChatKey(), offline()).chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "Say hello to Dana" }],
      tools: [helloTool],
      stream: true,
    });
    let name = "";
    const fragments: string[] = [];
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? "";
        fragments.push(delta.function?.arguments ?? "");
      }
    }
    expect(name).toBe("agent_hello_world");
    expect(fragments.filter(Boolean).length).toBeGreaterThan(0);
    expect(JSON.parse(fragments.join(""))).toEqual({ name: "Dana" });
  });

  it("answers 404 in OpenAI's shape for an endpoint the demo does not offer", async () => {
    const response = await post(
      "/embeddings",
      await newChatKey(),
      { model: DEMO_MODEL_ID, input: "hi" },
      {},
      offline(),
    );
    expect(response.status).toBe(404);
    const body = (await response.json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: "not_offered_by_demo", type: "not_found_error" });
    expect(body.error.message).toContain("LLM_BASE_URL");
  });

  it("refuses a message list the demo cannot read with 400 naming the field", async () => {
    const error = await openai(await newChatKey(), offline())
      .chat.completions.create({ model: DEMO_MODEL_ID, messages: [] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: "messages" });
  });
});

describe("the offline demo on the OpenAI wire, with a client's own tools", () => {
  const weather = {
    type: "function" as const,
    function: {
      name: "get_weather",
      description: "The weather in a city.",
      parameters: {
        type: "object",
        properties: {
          city: { type: "string" },
          days: { type: "integer", minimum: 1, maximum: 7 },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
        },
        required: ["city", "days", "unit"],
        additionalProperties: false,
      },
    },
  };

  it("retrieves the demo model with models.retrieve", async () => {
    const model = await openai(await newChatKey(), offline()).models.retrieve(DEMO_MODEL_ID);
    expect(model.id).toBe(DEMO_MODEL_ID);
  });

  it("calls one of the client's tools, with arguments valid for its schema, when tool_choice is required", async () => {
    const completion = await openai(await newChatKey(), offline()).chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "How warm will it be in Lisbon?" }],
      tools: [weather],
      tool_choice: "required",
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" ? [call.function.name, JSON.parse(call.function.arguments)] : null).toEqual([
      "get_weather",
      { city: "Lisbon", days: 1, unit: "celsius" },
    ]);
  });

  it("calls the tool the user's words name, streamed, without streaming any text first", async () => {
    const stream = await openai(await newChatKey(), offline()).chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "Please use get_weather for Oslo" }],
      tools: [weather],
      stream: true,
    });
    let text = "";
    let name = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) name += delta.function?.name ?? "";
    }
    expect([text, name]).toEqual(["", "get_weather"]);
  });

  it("answers in words, calling nothing, when tool_choice is none", async () => {
    const completion = await openai(await newChatKey(), offline()).chat.completions.create({
      model: DEMO_MODEL_ID,
      messages: [{ role: "user", content: "Use get_weather for Oslo" }],
      tools: [weather],
      tool_choice: "none",
    });
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]?.message.content).toContain("[offline demo model]");
  });

  it("satisfies the AI SDK's toolChoice 'required' with a call whose input passes the tool's zod schema", async () => {
    const provider = createOpenAI({
      baseURL: "http://localhost/v1",
      apiKey: (await newChatKey()).key,
      fetch: (input, init) => offline().fetch(input, init),
    });
    const result = await generateText({
      model: provider.chat(DEMO_MODEL_ID),
      prompt: "What is the weather in Porto?",
      tools: {
        weather: tool({
          description: "The weather in a city.",
          inputSchema: z.object({ city: z.string().min(2), when: z.enum(["today", "tomorrow"]) }),
          execute: async ({ city, when }) => `${city} ${when}: sunny`,
        }),
      },
      toolChoice: "required",
    });
    expect(result.toolCalls.map((c) => [c.toolName, c.input])).toEqual([["weather", { city: "Porto", when: "today" }]]);
    expect(result.toolResults.map((r) => r.output)).toEqual(["Porto today: sunny"]);
  });
});

// With no LLM_BASE_URL (what `npm start` runs), the passthrough forwards to the offline demo model's
// OpenAI-compatible face: the `openai` SDK lists it, gets answers and tool calls, plain and streamed.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
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
    expect(body.error).toMatchObject({ code: "not_offered_by_demo", type: "invalid_request_error" });
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

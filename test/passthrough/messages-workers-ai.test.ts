// The Messages wire on a Workers AI route: an Anthropic client's request translated to chat completions, run by the
// AI binding (a stand-in answering the shapes Cloudflare documents) through its OpenAI face, and answered back as a
// Messages API message.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { MODEL, standIn, USAGE } from "../llm/workers-ai-stand-in";
import { putRoute } from "../routing/fixtures";
import { newChatKey, workerWith } from "./harness";

describe("POST /v1/messages on a Workers AI route", () => {
  it("answers messages.create with the binding's text, the route's model run", async () => {
    const route = await putRoute({ provider: "workers_ai", model: MODEL });
    const { binding, runs } = standIn({ response: "Hello from Workers AI.", tool_calls: [], usage: USAGE });
    const through = workerWith({ AI: binding });
    const client = new Anthropic({
      apiKey: (await newChatKey()).key,
      baseURL: "http://localhost",
      maxRetries: 0,
      fetch: (input, init) => through.fetch(input, init),
    });
    const message = await client.messages.create({
      model: route,
      max_tokens: 64,
      system: "Be brief.",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(message).toMatchObject({
      type: "message",
      content: [{ type: "text", text: "Hello from Workers AI." }],
      stop_reason: "end_turn",
      usage: { input_tokens: 9, output_tokens: 4 },
    });
    expect(runs.map((run) => run.model)).toEqual([MODEL]);
    expect(runs[0]?.inputs.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
  });
});

// The binding's answers as model events, straight to the loop: what a turn sees of a whole and of a streamed
// answer, and that the loop's Workers AI model calls the binding with its own request and hears its failures in
// the binding's own words, with no OpenAI HTTP body written and parsed back in between.
import { describe, expect, it } from "vitest";
import type { ModelEvent } from "../../src/llm/model-events";
import { runWorkersAi } from "../../src/llm/workers-ai";
import { WorkersAiChatModel } from "../../src/llm/workers-ai-chat-model";
import { events, MODEL, standIn, USAGE } from "./workers-ai-stand-in";

const hi = [{ role: "user" as const, content: "hi" }];
const usage = { promptTokens: 9, completionTokens: 4, totalTokens: 13 };

async function collect(answer: { events: AsyncIterable<ModelEvent> | Iterable<ModelEvent> }): Promise<ModelEvent[]> {
  const seen: ModelEvent[] = [];
  for await (const event of answer.events) seen.push(event);
  return seen;
}

function modelOn(binding: ReturnType<typeof standIn>["binding"]) {
  return new WorkersAiChatModel({ ai: binding, model: MODEL, callTimeoutMs: 5_000, retryBaseMs: 1 });
}

describe("Workers AI as model events", () => {
  it("yields a whole answer as its text, each call with an id and JSON arguments, its usage and finish", async () => {
    const { binding } = standIn({
      response: "Checking.",
      tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
      usage: USAGE,
    });
    const answer = await runWorkersAi(binding, MODEL, { messages: hi, stream: false });
    expect([answer.streamed, await collect(answer)]).toEqual([
      false,
      [
        { type: "text", text: "Checking." },
        {
          type: "tool_call",
          index: 0,
          id: expect.stringMatching(/^call_/),
          name: "get_weather",
          arguments: '{"city":"Paris"}',
        },
        { type: "usage", usage },
        { type: "finish", reason: "tool_calls" },
      ],
    ]);
  });

  it("yields a streamed answer event by event: text pieces, call fragments by index, then usage and finish", async () => {
    const { binding } = standIn(
      events(
        { response: "Hel" },
        { response: "lo." },
        {
          choices: [
            { delta: { tool_calls: [{ index: 0, id: "f1", function: { name: "lookup", arguments: '{"q":' } }] } },
          ],
        },
        {
          choices: [
            { delta: { tool_calls: [{ index: 0, function: { arguments: '"y"}' } }] }, finish_reason: "tool_calls" },
          ],
        },
        { response: "", usage: USAGE },
        "[DONE]",
      ),
    );
    const answer = await runWorkersAi(binding, MODEL, { messages: hi, stream: true });
    expect([answer.streamed, await collect(answer)]).toEqual([
      true,
      [
        { type: "text", text: "Hel" },
        { type: "text", text: "lo." },
        { type: "tool_call", index: 0, id: "f1", name: "lookup", arguments: '{"q":' },
        { type: "tool_call", index: 0, arguments: '"y"}' },
        { type: "usage", usage },
        { type: "finish", reason: "tool_calls" },
      ],
    ]);
  });

  it("hands the binding the loop's own tool definitions, not a copy read back from a request body", async () => {
    const { binding, runs } = standIn({ response: "Done." });
    const tools = [
      { type: "function" as const, function: { name: "get_weather", description: "Weather.", parameters: {} } },
    ];
    await modelOn(binding).complete({ messages: hi, tools });
    expect(runs[0]?.inputs.tools).toBe(tools);
  });

  it("tells the loop of a binding's failure in the binding's own words, with no HTTP answer around them", async () => {
    const { binding } = standIn(new Error("3040: Capacity temporarily exceeded, please try again."));
    const failed = await modelOn(binding)
      .complete({ messages: hi, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({
      code: "model_rate_limited",
      status: 429,
      detail: "Workers AI: 3040: Capacity temporarily exceeded, please try again.",
      message: "The model service is rate limiting this server; try again in a minute.",
    });
  });

  it("calls a binding that is over capacity again in place, and answers with its next answer", async () => {
    const { binding, runs } = standIn(new Error("3040: Capacity temporarily exceeded."), { response: "Room now." });
    const response = await modelOn(binding).complete({ messages: hi });
    expect([response.content, runs.length]).toEqual(["Room now.", 2]);
  });
});

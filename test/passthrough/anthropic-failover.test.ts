// A route chain that mixes wires, seen by the official `@anthropic-ai/sdk` on POST /v1/messages: each attempt is
// sent in its route's wire (relayed to an anthropic route, translated for an OpenAI-compatible one) and the answer
// comes back as a Messages API message whichever route answered; usage rows read Anthropic's counts.
import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { toUpstreamB } from "../routing/fixtures";
import { anthropic, toAnthropic, usageRows } from "./anthropic-harness";
import { newChatKey, workerWith } from "./harness";

const overloaded = {
  type: "error" as const,
  status: 529,
  error: { type: "overloaded_error" as const, message: "Overloaded" },
};
const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

describe("failover across wires on POST /v1/messages", () => {
  it("fails over from an anthropic route answering 529 to an OpenAI-compatible fallback, answering a message", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const script = await scriptAnthropic([overloaded]);
    const b = await scriptUpstream([{ type: "completion", content: "from B", usage }], env.TEST_UPSTREAM_B_URL);
    const { data, response } = await anthropic(await newChatKey())
      .messages.create({
        model: route,
        max_tokens: 64,
        messages: [{ role: "user", content: `${script.marker} ${b.marker}` }],
      })
      .withResponse();
    expect([data.type, data.content, data.stop_reason, data.usage.input_tokens]).toEqual([
      "message",
      [{ type: "text", text: "from B" }],
      "end_turn",
      12,
    ]);
    expect([response.headers.get("x-aptix-route"), response.headers.get("x-aptix-route-failed")]).toEqual([
      fallback,
      route,
    ]);
    const [sent] = await b.bodies();
    expect([sent?.model, sent?.max_completion_tokens]).toEqual(["model-b", 64]);
  });

  it("streams Anthropic's events from the OpenAI-compatible fallback after the anthropic route failed", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const script = await scriptAnthropic([overloaded]);
    const b = await scriptUpstream(
      [{ type: "completion", content: "streamed from B", chunkSize: 4, usage }],
      env.TEST_UPSTREAM_B_URL,
    );
    const message = await anthropic(await newChatKey())
      .messages.stream({
        model: route,
        max_tokens: 64,
        messages: [{ role: "user", content: `${script.marker} ${b.marker}` }],
      })
      .finalMessage();
    expect([message.content, message.usage.output_tokens]).toEqual([[{ type: "text", text: "streamed from B" }], 5]);
  });

  it("fails over from an OpenAI-compatible route answering 500 to an anthropic fallback, which gets the client's body", async () => {
    const anthropicRoute = await toAnthropic();
    const route = await toUpstreamB({ fallbacks: [anthropicRoute] });
    const b = await scriptUpstream([{ type: "error", status: 500, body: "boom" }], env.TEST_UPSTREAM_B_URL);
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "from Claude" }] }]);
    const sent: string[] = [];
    const message = await anthropic(await newChatKey(), { sent }).messages.create({
      model: route,
      max_tokens: 64,
      messages: [{ role: "user", content: `${b.marker} ${script.marker}` }],
    });
    expect(message.content).toEqual([{ type: "text", text: "from Claude" }]);
    const [received] = await script.requests();
    expect(received?.body).toBe(JSON.stringify({ ...JSON.parse(sent[0] ?? "{}"), model: "claude-test" }));
  });

  it("leaves out a fallback that cannot carry the request (extended thinking): the anthropic route's error stands", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const script = await scriptAnthropic([overloaded]);
    const b = await scriptUpstream([{ type: "completion", content: "never" }], env.TEST_UPSTREAM_B_URL);
    const error = await anthropic(await newChatKey())
      .messages.create({
        model: route,
        max_tokens: 2048,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [{ role: "user", content: `${script.marker} ${b.marker}` }],
      })
      .catch((e: unknown) => e);
    expect(error instanceof Anthropic.APIError ? [error.status, error.error] : null).toEqual([
      529,
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" }, request_id: expect.any(String) },
    ]);
    expect(await b.requests()).toEqual([]);
  });

  it("records an error row for the failed anthropic attempt and the fallback's tokens", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const script = await scriptAnthropic([overloaded]);
    const b = await scriptUpstream([{ type: "completion", content: "ok", usage }], env.TEST_UPSTREAM_B_URL);
    const key = await newChatKey();
    const through = workerWith();
    await anthropic(key, { through }).messages.create({
      model: route,
      max_tokens: 8,
      messages: [{ role: "user", content: `${script.marker} ${b.marker}` }],
    });
    await through.settled();
    const rows = (await usageRows(key)).sort((x, y) => x.outcome.localeCompare(y.outcome));
    expect(rows).toEqual([
      { route, model: "claude-test", prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, outcome: "error" },
      { route: fallback, model: "model-b", prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, outcome: "ok" },
    ]);
  });
});

describe("usage of a relayed anthropic route", () => {
  const message = {
    id: "msg_usage",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, cache_creation_input_tokens: 3, cache_read_input_tokens: 4, output_tokens: 6 },
  };

  it("records a JSON message's usage, the cache's writes and reads counted as input", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "json", body: message }]);
    const key = await newChatKey();
    const through = workerWith();
    await anthropic(key, { through }).messages.create({
      model: route,
      max_tokens: 8,
      messages: [{ role: "user", content: script.marker }],
    });
    await through.settled();
    expect(await usageRows(key)).toEqual([
      { route, model: "claude-test", prompt_tokens: 17, completion_tokens: 6, total_tokens: 23, outcome: "ok" },
    ]);
  });

  it("records a stream's usage from message_start's input and message_delta's output", async () => {
    const route = await toAnthropic();
    const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}`;
    const start = { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } };
    const script = await scriptAnthropic([
      {
        type: "sse",
        end: "close",
        events: [
          event("message_start", { type: "message_start", message: start }),
          event("content_block_start", {
            type: "content_block_start",
            index: 0,
            content_block: { type: "text", text: "" },
          }),
          event("content_block_delta", {
            type: "content_block_delta",
            index: 0,
            delta: { type: "text_delta", text: "ok" },
          }),
          event("content_block_stop", { type: "content_block_stop", index: 0 }),
          event("message_delta", {
            type: "message_delta",
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: 6 },
          }),
          event("message_stop", { type: "message_stop" }),
        ],
      },
    ]);
    const key = await newChatKey();
    const through = workerWith();
    const final = await anthropic(key, { through })
      .messages.stream({ model: route, max_tokens: 8, messages: [{ role: "user", content: script.marker }] })
      .finalMessage();
    await through.settled();
    expect(final.usage.output_tokens).toBe(6);
    expect(await usageRows(key)).toEqual([
      { route, model: "claude-test", prompt_tokens: 17, completion_tokens: 6, total_tokens: 23, outcome: "ok" },
    ]);
  });
});

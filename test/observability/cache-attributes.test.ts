// A model call's span says what the provider read from its prompt cache and wrote to it, in the semantic
// conventions' names (gen_ai.usage.cache_read.input_tokens, gen_ai.usage.cache_creation.input_tokens), beside
// gen_ai.usage.input_tokens, which counts every input token: OpenAI's cached_tokens and Anthropic's cache counts.
import { describe, expect, it } from "vitest";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { toAnthropic } from "../passthrough/anthropic-harness";
import { BASE_URL, newChatKey, worker } from "../passthrough/harness";
import { SPAN_KIND, type SpanRecord } from "./span-record";
import { newTrace, spansOfTrace } from "./spans";

const clientSpan = (spans: SpanRecord[]) => spans.find((s) => s.kind === SPAN_KIND.client);
const twoSpans = (spans: SpanRecord[]) => spans.length >= 2;

async function post(path: string, body: Record<string, unknown>, traceparent: string, headers = {}) {
  const key = await newChatKey();
  return worker.fetch(`${BASE_URL}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", traceparent, ...headers },
    body: JSON.stringify(body),
  });
}

describe("the prompt cache on a model call's span", () => {
  it("carries OpenAI's cached tokens as gen_ai.usage.cache_read.input_tokens", async () => {
    const usage = {
      prompt_tokens: 1300,
      completion_tokens: 2,
      total_tokens: 1302,
      prompt_tokens_details: { cached_tokens: 1152 },
    };
    const script = await scriptUpstream([{ type: "completion", content: "ok", usage }]);
    const trace = newTrace();
    const body = { model: "scripted-model", messages: [{ role: "user", content: script.marker }] };
    expect((await post("/chat/completions", body, trace.traceparent)).status).toBe(200);
    const call = clientSpan(await spansOfTrace(trace.traceId, { until: twoSpans }));
    expect(call?.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 1300,
      "gen_ai.usage.cache_read.input_tokens": 1152,
    });
  });

  it("carries Anthropic's cache reads and writes, input_tokens counting them too", async () => {
    const route = await toAnthropic();
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    const trace = newTrace();
    const body = {
      model: route,
      max_tokens: 16,
      system: [
        { type: "text", text: `${"Rules. ".repeat(900)}${script.marker}`, cache_control: { type: "ephemeral" } },
      ],
      messages: [{ role: "user", content: "hi" }],
    };
    const answer = await post("/messages", body, trace.traceparent, { "anthropic-version": "2023-06-01" });
    const usage = ((await answer.json()) as { usage: Record<string, number> }).usage;
    const call = clientSpan(await spansOfTrace(trace.traceId, { until: twoSpans }));
    expect(call?.attributes).toMatchObject({
      "gen_ai.usage.input_tokens":
        (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
      "gen_ai.usage.cache_read.input_tokens": usage.cache_read_input_tokens,
      "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_input_tokens,
    });
    expect(usage.cache_creation_input_tokens).toBeGreaterThan(1024);
  });
});

// Passthrough requests as traces: a CLIENT span per request (chat, embeddings) under the request's server span,
// ended after the answer (a stream's last byte) with the tokens of its usage row; its traceparent goes upstream in
// place of the client's; both OTLP protocols; sampling; and a collector that is down costs a warning, not a reply.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { toAnthropic } from "../passthrough/anthropic-harness";
import { BASE_URL, newChatKey, type TestKey, type TestWorker, worker, workerWith } from "../passthrough/harness";
import { toUpstreamB } from "../routing/fixtures";
import { SPAN_KIND, type SpanRecord } from "./span-record";
import { exportRequests, newTrace, spansOfTrace } from "./spans";

async function post(
  path: string,
  key: TestKey,
  body: Record<string, unknown>,
  traceparent: string,
  through: TestWorker = worker,
): Promise<Response> {
  return through.fetch(`${BASE_URL}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", traceparent },
    body: JSON.stringify(body),
  });
}

/** One chat completion of the scripted model with the script's marker, sent with `traceparent`. */
function chat(
  key: TestKey,
  marker: string,
  traceparent: string,
  through: TestWorker = worker,
  extra: Record<string, unknown> = {},
): Promise<Response> {
  return post(
    "/chat/completions",
    key,
    { model: "scripted-model", messages: [{ role: "user", content: marker }], ...extra },
    traceparent,
    through,
  );
}

const usage = { prompt_tokens: 21, completion_tokens: 7, total_tokens: 28 };

/** The usage row of the key's one request, once written (after the reply). */
async function usageRow(keyId: string): Promise<{ prompt_tokens: number; completion_tokens: number } | null> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const row = await env.DB.prepare("SELECT prompt_tokens, completion_tokens FROM usage_records WHERE key_id = ?")
      .bind(keyId)
      .first<{ prompt_tokens: number; completion_tokens: number }>();
    if (row || Date.now() > deadline) return row;
    await scheduler.wait(50);
  }
}

const clientSpan = (spans: SpanRecord[]) => spans.find((s) => s.kind === SPAN_KIND.client);
const twoSpans = (spans: SpanRecord[]) => spans.length >= 2;

describe("a passthrough request's trace", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is a chat client span under the request's server span, with the tokens of its usage row", async () => {
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "hello", usage }]);
    const trace = newTrace();
    const response = await chat(key, script.marker, trace.traceparent);
    expect(response.status).toBe(200);
    const spans = await spansOfTrace(trace.traceId, { until: twoSpans });
    const server = spans.find((s) => s.kind === SPAN_KIND.server);
    const call = clientSpan(spans);
    expect(server?.name).toBe("POST /v1/chat/completions");
    expect(call?.parentSpanId).toBe(server?.spanId);
    expect(call?.name).toBe("chat scripted-model");
    const row = await usageRow(key.keyId);
    expect(call?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "scripted-model",
      "gen_ai.response.model": "scripted-model",
      "gen_ai.usage.input_tokens": row?.prompt_tokens,
      "gen_ai.usage.output_tokens": row?.completion_tokens,
      "aptix.model_route": "default",
      "aptix.upstream.status": 200,
      "aptix.outcome": "ok",
    });
    expect(row).toEqual({ prompt_tokens: 21, completion_tokens: 7 });
  });

  it("sends its own span's traceparent upstream in place of the client's", async () => {
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "hello" }]);
    const trace = newTrace();
    await chat(key, script.marker, trace.traceparent);
    const call = clientSpan(await spansOfTrace(trace.traceId, { until: twoSpans }));
    const [sent] = await script.requests();
    expect(sent?.headers.traceparent).toBe(`00-${trace.traceId}-${call?.spanId}-01`);
  });

  it("sends the same span's traceparent to each route a failover tries, across wires", async () => {
    const fallback = await toUpstreamB();
    const route = await toAnthropic({ fallbacks: [fallback] });
    const first = await scriptAnthropic([
      { type: "error", status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
    ]);
    const second = await scriptUpstream([{ type: "completion", content: "from B", usage }], env.TEST_UPSTREAM_B_URL);
    const trace = newTrace();
    const response = await post(
      "/messages",
      await newChatKey(),
      { model: route, max_tokens: 64, messages: [{ role: "user", content: `${first.marker} ${second.marker}` }] },
      trace.traceparent,
    );
    expect(response.status).toBe(200);
    const call = clientSpan(await spansOfTrace(trace.traceId, { until: twoSpans }));
    const sent = [...(await first.requests()), ...(await second.requests())].map((r) => r.headers.traceparent);
    expect(sent).toEqual([`00-${trace.traceId}-${call?.spanId}-01`, `00-${trace.traceId}-${call?.spanId}-01`]);
  });

  it("ends a streamed call's span after its last byte, with the stream's usage", async () => {
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "streamed words", usage, chunkDelayMs: 20 }]);
    const trace = newTrace();
    const response = await chat(key, script.marker, trace.traceparent, worker, { stream: true });
    const text = await response.text();
    const readAt = Date.now();
    expect(text).toContain("[DONE]");
    const spans = await spansOfTrace(trace.traceId, { until: twoSpans });
    const server = spans.find((s) => s.kind === SPAN_KIND.server);
    const call = clientSpan(spans);
    expect(call?.attributes).toMatchObject({
      "gen_ai.request.stream": true,
      "gen_ai.usage.input_tokens": 21,
      "gen_ai.usage.output_tokens": 7,
    });
    // The server span ends with its handler (the stream's headers); the call's span only when the stream is done.
    expect(call?.endMs ?? 0).toBeGreaterThan(server?.endMs ?? Number.POSITIVE_INFINITY);
    expect(call?.endMs ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(readAt + 1);
  });

  it("names an embeddings call for its operation", async () => {
    const key = await newChatKey();
    const answer = {
      object: "list",
      data: [{ object: "embedding", index: 0, embedding: [0.5] }],
      model: "emb-test",
      usage: { prompt_tokens: 3, total_tokens: 3 },
    };
    const script = await scriptUpstream([{ type: "json", body: answer }]);
    const trace = newTrace();
    await post("/embeddings", key, { model: "emb-test", input: script.marker }, trace.traceparent);
    const call = clientSpan(await spansOfTrace(trace.traceId, { until: twoSpans }));
    expect([
      call?.name,
      call?.attributes["gen_ai.operation.name"],
      call?.attributes["gen_ai.usage.input_tokens"],
    ]).toEqual(["embeddings emb-test", "embeddings", 3]);
  });

  it("exports as OTLP/JSON when OTEL_EXPORTER_OTLP_PROTOCOL says http/json, with the configured headers", async () => {
    const through = workerWith({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "hello" }]);
    const trace = newTrace();
    await chat(key, script.marker, trace.traceparent, through);
    const spans = await spansOfTrace(trace.traceId, { until: twoSpans });
    expect(spans.map((s) => s.protocol)).toEqual(["http/json", "http/json"]);
    const [request] = await exportRequests(trace.traceId);
    expect(request?.headers.authorization).toBe("Bearer otlp-test-token");
  });

  it("sends the spans of requests that end within OTEL_BSP_SCHEDULE_DELAY of each other in one export", async () => {
    const through = workerWith({ OTEL_BSP_SCHEDULE_DELAY: "400" });
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "hello" }], undefined, { repeat: true });
    const traces = [newTrace(), newTrace()];
    for (const trace of traces) {
      await chat(key, script.marker, trace.traceparent, through);
    }
    await spansOfTrace(traces[1]?.traceId ?? "", { until: twoSpans });
    const requests = await exportRequests(traces[0]?.traceId);
    expect(requests.map((r) => [...r.traceIds].sort())).toEqual([traces.map((t) => t.traceId).sort()]);
  });

  it("records nothing of a caller's unsampled trace, and still sends its context upstream unsampled", async () => {
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "hello" }]);
    const trace = newTrace(false);
    await chat(key, script.marker, trace.traceparent);
    const [sent] = await script.requests();
    expect(sent?.headers.traceparent).toMatch(new RegExp(`^00-${trace.traceId}-[0-9a-f]{16}-00$`));
    expect(await spansOfTrace(trace.traceId, { timeoutMs: 600 })).toEqual([]);
  });

  it("records nothing with OTEL_TRACES_SAMPLER=always_off, even of a sampled caller", async () => {
    const through = workerWith({ OTEL_TRACES_SAMPLER: "always_off" });
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "hello" }]);
    const trace = newTrace();
    const response = await chat(key, script.marker, trace.traceparent, through);
    expect(response.status).toBe(200);
    expect(await spansOfTrace(trace.traceId, { timeoutMs: 600 })).toEqual([]);
  });

  it("answers as usual when the collector is down, and logs a warning naming it", async () => {
    const warnings: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((line: unknown) => {
      warnings.push(String(line));
    });
    const through = workerWith({ OTEL_EXPORTER_OTLP_ENDPOINT: env.TEST_OTLP_DOWN_URL });
    const key = await newChatKey();
    const script = await scriptUpstream([{ type: "completion", content: "still here" }]);
    const response = await chat(key, script.marker, newTrace().traceparent, through);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect([response.status, body.choices[0]?.message.content]).toEqual([200, "still here"]);
    const deadline = Date.now() + 8_000;
    while (!warnings.some((w) => w.includes("[Tracing_ExportFailed]")) && Date.now() < deadline) {
      await scheduler.wait(50);
    }
    const warning = JSON.parse(warnings.find((w) => w.includes("[Tracing_ExportFailed]")) ?? "{}") as Record<
      string,
      string
    >;
    expect(warning).toMatchObject({ level: "Warning", Collector: `${env.TEST_OTLP_DOWN_URL}/v1/traces` });
    expect(JSON.stringify(warning)).not.toContain("otlp-test-token");
  });
});

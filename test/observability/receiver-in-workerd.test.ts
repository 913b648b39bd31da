// The OTLP receiver as a test in the Workers runtime reaches it: an export posted from inside workerd to
// env.TEST_OTLP_URL is read back through the control server (spans.ts), the path every tracing test depends on.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { oneSpanJsonExport } from "./otlp-json-body";
import { exportRequests, spanNamed, spansOfTrace } from "./spans";

/** A fresh trace id (32 lowercase hex digits), so this test's span is its own among other files'. */
const newTraceId = () => crypto.randomUUID().replaceAll("-", "");

async function postOneSpan(traceId: string, headers: Record<string, string> = {}): Promise<Response> {
  const body = oneSpanJsonExport({
    traceId,
    spanId: "eee19b7ec3c1b174",
    name: "posted from workerd",
    startMs: 1_767_225_600_000,
    endMs: 1_767_225_600_040,
  });
  return fetch(`${env.TEST_OTLP_URL}/v1/traces`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

it("reads back, through the control server, a span posted from workerd", async () => {
  const traceId = newTraceId();
  await postOneSpan(traceId);
  const span = spanNamed(await spansOfTrace(traceId), "posted from workerd");
  expect({ traceId: span.traceId, spanId: span.spanId, startMs: span.startMs, endMs: span.endMs }).toEqual({
    traceId,
    spanId: "eee19b7ec3c1b174",
    startMs: 1_767_225_600_000,
    endMs: 1_767_225_600_040,
  });
});

it("lists the export's request with the headers it carried", async () => {
  const traceId = newTraceId();
  await postOneSpan(traceId, { authorization: "Bearer from-workerd" });
  const requests = await exportRequests(traceId);
  expect(requests.map((r) => [r.protocol, r.headers.authorization, r.spanCount])).toEqual([
    ["http/json", "Bearer from-workerd", 1],
  ]);
});

it("answers with nothing once the wait for a trace that never came is over", async () => {
  const started = Date.now();
  const spans = await spansOfTrace(newTraceId(), { timeoutMs: 200 });
  expect({ spans, waitedAtLeast200Ms: Date.now() - started >= 200 }).toEqual({ spans: [], waitedAtLeast200Ms: true });
});

it("finds no collector at the down URL", async () => {
  await expect(fetch(`${env.TEST_OTLP_DOWN_URL}/v1/traces`, { method: "POST", body: "{}" })).rejects.toThrow();
});

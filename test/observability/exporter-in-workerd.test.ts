// The harness with OpenTelemetry's own exporter running in workerd (its fetch build, as the Worker uses it): a span
// exported over http/protobuf arrives at the receiver whole, with the export's headers. If this fails, so will every
// tracing test, and for a reason of the harness, not of the tracing.
import { env } from "cloudflare:workers";
import { SpanKind } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { beforeAll, expect, it } from "vitest";
import { TEST_OTLP_AUTHORIZATION } from "./otlp-headers";
import { SPAN_KIND } from "./span-record";
import { exportRequests, spanNamed, spansOfTrace } from "./spans";

let traceId: string;

beforeAll(async () => {
  const exporter = new OTLPTraceExporter({
    url: `${env.TEST_OTLP_URL}/v1/traces`,
    headers: { authorization: TEST_OTLP_AUTHORIZATION },
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "harness-in-workerd" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const span = provider.getTracer("harness").startSpan("exported from workerd", {
    kind: SpanKind.SERVER,
    attributes: { "http.response.status_code": 200 },
  });
  traceId = span.spanContext().traceId;
  span.end();
  await provider.forceFlush();
  await provider.shutdown();
});

it("receives over http/protobuf a span OpenTelemetry's exporter sent from workerd", async () => {
  const span = spanNamed(await spansOfTrace(traceId), "exported from workerd");
  expect({
    protocol: span.protocol,
    kind: span.kind,
    service: span.resource["service.name"],
    attributes: span.attributes,
  }).toEqual({
    protocol: "http/protobuf",
    kind: SPAN_KIND.server,
    service: "harness-in-workerd",
    attributes: { "http.response.status_code": 200 },
  });
});

it("receives the exporter's headers from workerd", async () => {
  await spansOfTrace(traceId);
  const requests = await exportRequests(traceId);
  expect(requests.map((r) => r.headers.authorization)).toEqual([TEST_OTLP_AUTHORIZATION]);
});

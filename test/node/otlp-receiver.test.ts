// The OTLP/HTTP receiver the tracing tests export to (test/observability/otlp-receiver.ts), as OpenTelemetry's own
// exporters see it: one span, continued from a remote parent, sent once over http/protobuf and once over http/json,
// comes back as the same record; the export's headers arrive; other requests get a collector's answers.
import { gzipSync } from "node:zlib";
import { context, type Link, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { oneSpanJsonExport } from "../observability/otlp-json-body.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../observability/otlp-receiver.ts";
import { type OtlpProtocol, SPAN_KIND, type SpanRecord, STATUS_CODE } from "../observability/span-record.ts";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const REMOTE_PARENT_ID = "b7ad6b7169203331";
const LINKED_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const LINKED_SPAN_ID = "00f067aa0ba902b7";
const EXPORT_HEADERS = { authorization: "Bearer otlp-test-token" };
/** 2026-01-01T00:00:00.250Z and one and a half seconds later, as [seconds, nanoseconds]. */
const START: [number, number] = [1_767_225_600, 250_000_000];
const END: [number, number] = [1_767_225_601, 750_000_000];

let receiver: OtlpReceiver;

/** The span every exporter test sends: each attribute type, an event, a link, a remote parent, an error status. */
function exportOneSpan(provider: TracerProvider): void {
  const parent = new W3CTraceContextPropagator().extract(
    context.active(),
    { traceparent: `00-${TRACE_ID}-${REMOTE_PARENT_ID}-01` },
    { get: (carrier, key) => carrier[key], keys: (carrier) => Object.keys(carrier) },
  );
  const link: Link = {
    context: { traceId: LINKED_TRACE_ID, spanId: LINKED_SPAN_ID, traceFlags: 1 },
    attributes: { "link.reason": "retry of" },
  };
  const span = provider.getTracer("receiver-test", "1.2.3").startSpan(
    "chat gpt-x",
    {
      kind: SpanKind.CLIENT,
      startTime: START,
      links: [link],
      attributes: {
        "gen_ai.request.model": "gpt-x",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.request.temperature": 0.25,
        "gen_ai.request.stream": true,
        "gen_ai.response.finish_reasons": ["stop", "length"],
      },
    },
    parent,
  );
  span.addEvent("failover", { "aptix.route": "b", "aptix.attempt": 2 }, [1_767_225_601, 0]);
  span.setStatus({ code: SpanStatusCode.ERROR, message: "upstream refused" });
  span.end(END);
}

/** The span's record as each protocol delivered it. */
async function sendThroughBothExporters(): Promise<Record<OtlpProtocol, SpanRecord>> {
  const url = `${receiver.url}/v1/traces`;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: "receiver-test" }),
    spanProcessors: [
      new SimpleSpanProcessor({ exporter: new ProtoExporter({ url, headers: EXPORT_HEADERS }) }),
      new SimpleSpanProcessor({ exporter: new JsonExporter({ url, headers: EXPORT_HEADERS }) }),
    ],
  });
  exportOneSpan(provider);
  await provider.forceFlush();
  await provider.shutdown();
  const only = (protocol: OtlpProtocol) => {
    const [span, ...more] = receiver.spans({ traceId: TRACE_ID }).filter((s) => s.protocol === protocol);
    if (!span || more.length > 0) throw new Error(`${more.length + (span ? 1 : 0)} spans over ${protocol}, not 1`);
    return span;
  };
  return { "http/protobuf": only("http/protobuf"), "http/json": only("http/json") };
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

describe("a span exported by OpenTelemetry's exporters", () => {
  let received: Record<OtlpProtocol, SpanRecord>;

  beforeAll(async () => {
    receiver.clear();
    received = await sendThroughBothExporters();
  });

  it("decodes to the same record over http/protobuf and http/json", () => {
    const { protocol: _protobuf, ...fromProtobuf } = received["http/protobuf"];
    const { protocol: _json, ...fromJson } = received["http/json"];
    expect(fromProtobuf).toEqual(fromJson);
  });

  it.each(["http/protobuf", "http/json"] as const)("carries the ids as lowercase hex over %s", (protocol) => {
    const span = received[protocol];
    expect({ traceId: span.traceId, parentSpanId: span.parentSpanId }).toEqual({
      traceId: TRACE_ID,
      parentSpanId: REMOTE_PARENT_ID,
    });
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
  });

  it("gives OTLP's number for the span kind (client is 3)", () => {
    expect(received["http/protobuf"].kind).toBe(SPAN_KIND.client);
  });

  it("keeps each attribute's type", () => {
    expect(received["http/protobuf"].attributes).toEqual({
      "gen_ai.request.model": "gpt-x",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.request.temperature": 0.25,
      "gen_ai.request.stream": true,
      "gen_ai.response.finish_reasons": ["stop", "length"],
    });
  });

  it("keeps the event, its time and its attributes", () => {
    expect(received["http/protobuf"].events).toEqual([
      { name: "failover", timeMs: 1_767_225_601_000, attributes: { "aptix.route": "b", "aptix.attempt": 2 } },
    ]);
  });

  it("keeps the link", () => {
    expect(received["http/protobuf"].links).toEqual([
      { traceId: LINKED_TRACE_ID, spanId: LINKED_SPAN_ID, attributes: { "link.reason": "retry of" } },
    ]);
  });

  it("keeps the error status and its message", () => {
    expect(received["http/protobuf"].status).toEqual({ code: STATUS_CODE.error, message: "upstream refused" });
  });

  it("gives the start and end as epoch milliseconds", () => {
    const { startMs, endMs } = received["http/protobuf"];
    expect({ startMs, endMs }).toEqual({ startMs: 1_767_225_600_250, endMs: 1_767_225_601_750 });
  });

  it("keeps the resource and the instrumentation scope", () => {
    const { resource, scope } = received["http/protobuf"];
    expect({ serviceName: resource[ATTR_SERVICE_NAME], scope }).toEqual({
      serviceName: "receiver-test",
      scope: { name: "receiver-test", version: "1.2.3" },
    });
  });

  it("keeps each export's headers", () => {
    expect(receiver.requests.map((r) => [r.protocol, r.headers.authorization, r.spanCount, r.traceIds])).toEqual([
      ["http/protobuf", EXPORT_HEADERS.authorization, 1, [TRACE_ID]],
      ["http/json", EXPORT_HEADERS.authorization, 1, [TRACE_ID]],
    ]);
  });
});

describe("the receiver's answers", () => {
  const body = oneSpanJsonExport({
    traceId: "5b8efff798038103d269b633813fc60c",
    spanId: "eee19b7ec3c1b174",
    name: "hand-written",
    startMs: 1_767_225_600_000,
    endMs: 1_767_225_600_005,
  });
  const post = (init: { headers: Record<string, string>; body: string | Uint8Array }, path = "/v1/traces") =>
    fetch(`${receiver.url}${path}`, { method: "POST", ...init });

  beforeEach(() => receiver.clear());

  it("answers an http/json export with 200 and an empty JSON object", async () => {
    const response = await post({ headers: { "content-type": "application/json" }, body });
    expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: {} });
  });

  it("answers an http/protobuf export with 200 and an empty ExportTraceServiceResponse", async () => {
    const response = await post({ headers: { "content-type": "application/x-protobuf" }, body: new Uint8Array() });
    const answer = {
      status: response.status,
      type: response.headers.get("content-type"),
      bytes: (await response.arrayBuffer()).byteLength,
    };
    expect(answer).toEqual({ status: 200, type: "application/x-protobuf", bytes: 0 });
  });

  it("reads an int64 attribute written as a string or as a number", async () => {
    await post({ headers: { "content-type": "application/json" }, body });
    expect(receiver.spans()[0]?.attributes).toEqual({ "as.string": 7, "as.number": 8 });
  });

  it("gives a root span a null parent id", async () => {
    await post({ headers: { "content-type": "application/json" }, body });
    expect(receiver.spans()[0]?.parentSpanId).toBeNull();
  });

  it("takes a gzipped body", async () => {
    await post({ headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: gzipSync(body) });
    expect(receiver.spans().map((span) => span.name)).toEqual(["hand-written"]);
  });

  it("refuses another content type with 415 and keeps no span", async () => {
    const response = await post({ headers: { "content-type": "text/plain" }, body });
    expect({ status: response.status, spans: receiver.spans() }).toEqual({ status: 415, spans: [] });
  });

  it("refuses a body that is not an export with 400 and says why in its request record", async () => {
    const response = await post({ headers: { "content-type": "application/json" }, body: '{"resourceSpans":7}' });
    expect({ status: response.status, error: typeof receiver.requests[0]?.error }).toEqual({
      status: 400,
      error: "string",
    });
  });

  it("answers another path with 404", async () => {
    const response = await post({ headers: { "content-type": "application/json" }, body }, "/v1/metrics");
    expect(response.status).toBe(404);
  });

  it("forgets spans and requests when cleared", async () => {
    await post({ headers: { "content-type": "application/json" }, body });
    receiver.clear();
    expect({ spans: receiver.spans(), requests: receiver.requests }).toEqual({ spans: [], requests: [] });
  });
});

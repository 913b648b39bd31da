// A hand-written OTLP/JSON export of one span, for the receiver's tests (in Node and in workerd) that post a body
// of their own rather than through an exporter. No imports: both sides use it.

export interface OneSpan {
  traceId: string;
  spanId: string;
  name: string;
  /** Epoch milliseconds. */
  startMs: number;
  endMs: number;
}

/** An ExportTraceServiceRequest in OTLP/JSON (hex ids, int64 as strings, enums as numbers) holding `span`. */
export function oneSpanJsonExport(span: OneSpan): string {
  const nanos = (ms: number) => (BigInt(ms) * 1_000_000n).toString();
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "hand-written" } }] },
        scopeSpans: [
          {
            scope: { name: "test", version: "1" },
            spans: [
              {
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: "",
                name: span.name,
                kind: 1,
                startTimeUnixNano: nanos(span.startMs),
                endTimeUnixNano: nanos(span.endMs),
                // An int64 may come as a string or a number in OTLP/JSON: one of each.
                attributes: [
                  { key: "as.string", value: { intValue: "7" } },
                  { key: "as.number", value: { intValue: 8 } },
                ],
                status: {},
              },
            ],
          },
        ],
      },
    ],
  });
}

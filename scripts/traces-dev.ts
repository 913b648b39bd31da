// npm run traces:dev: a local OTLP/HTTP trace collector for `npm start` / `npm run dev`, with nothing to install
// or sign up for: the receiver the tests use (test/observability/otlp-receiver.ts: protobuf and JSON) on
// http://127.0.0.1:4318 (the OTLP/HTTP port; TRACES_PORT=... for another), printing each span as a line, its
// children indented under it. Start the Worker with OTEL_EXPORTER_OTLP_ENDPOINT pointed at it (printed below).

import { startOtlpReceiver } from "../test/observability/otlp-receiver.ts";
import type { SpanRecord } from "../test/observability/span-record.ts";

const port = Number(process.env.TRACES_PORT ?? 4318);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`TRACES_PORT must be a port number, not ${process.env.TRACES_PORT}`);
  process.exit(1);
}

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
try {
  receiver = await startOtlpReceiver({ port, host: "127.0.0.1" });
} catch (error) {
  const inUse = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
  console.error(inUse ? `Port ${port} is taken: stop what serves it, or set TRACES_PORT.` : error);
  process.exit(1);
}

console.log(`OTLP/HTTP collector at ${receiver.url} (Ctrl-C stops it). Start the Worker with:\n`);
console.log(`  npm start -- --var OTEL_EXPORTER_OTLP_ENDPOINT:${receiver.url}\n`);

/** The attributes worth a glance, by span. */
const SHOWN = [
  "http.response.status_code",
  "gen_ai.request.model",
  "gen_ai.response.model",
  "aptix.model_route",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.response.time_to_first_chunk",
  "aptix.tool.ran_on",
  "aptix.turn.outcome",
  "error.type",
];

function line(span: SpanRecord, depth: number): string {
  const figures = SHOWN.filter((k) => span.attributes[k] !== undefined).map(
    (k) => `${k}=${String(span.attributes[k])}`,
  );
  const events = span.events.map((e) => e.name);
  return `${"  ".repeat(depth)}${span.name}  ${(span.endMs - span.startMs).toFixed(1)} ms  ${figures.join(" ")}${events.length ? `  events: ${events.join(", ")}` : ""}`;
}

/** Prints a batch's traces as trees: each span under its parent when the parent came in the same batch. */
function print(batch: SpanRecord[]): void {
  const ids = new Set(batch.map((s) => s.spanId));
  const children = (parent: string) => batch.filter((s) => s.parentSpanId === parent);
  const walk = (span: SpanRecord, depth: number): string[] => [
    line(span, depth),
    ...children(span.spanId).flatMap((c) => walk(c, depth + 1)),
  ];
  for (const traceId of new Set(batch.map((s) => s.traceId))) {
    const roots = batch.filter((s) => s.traceId === traceId && !ids.has(s.parentSpanId ?? ""));
    console.log(`\ntrace ${traceId}`);
    for (const root of roots.sort((a, b) => a.startMs - b.startMs)) console.log(walk(root, 1).join("\n"));
  }
}

let printed = 0;
setInterval(() => {
  const spans = receiver.spans();
  if (spans.length > printed) print(spans.slice(printed));
  printed = spans.length;
}, 250);

process.once("SIGINT", () => {
  void receiver.close().then(() => process.exit(0));
});

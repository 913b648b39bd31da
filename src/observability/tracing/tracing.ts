// Traces, when an OTLP endpoint is configured: one TracerProvider per isolate and settings (kept private: the
// libraries bundled with us that speak @opentelemetry/api must not start exporting through it), spans buffered in
// the isolate and exported after the response (span-flusher.ts), and the active span carried through awaits by
// AsyncLocalStorage (nodejs_compat, on by the compatibility date). Off, nothing here runs: no provider, no context
// manager, and every helper below answers at once with nothing.
import {
  type Context,
  context,
  createContextKey,
  ROOT_CONTEXT,
  type Span,
  type SpanOptions,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { settings } from "../../settings";
import type { TracingSettings } from "../../tracing-settings";
import type { AdminLogger } from "../admin-logger";
import { JsonAdminLogger } from "../admin-logger";
import { inRequest, SpanFlusher } from "./span-flusher";

/** The instrumentation scope every span of ours carries. */
export const TRACER_NAME = "aptix-edge";
export const SERVICE_VERSION = "0.1.0";

/** How long one export may take before it is given up (it runs after the response, never before it). */
const EXPORT_TIMEOUT_MS = 5_000;

/** The tracer, its settings, and a flush; one per isolate and settings. */
export interface Tracing {
  readonly tracer: Tracer;
  readonly settings: TracingSettings;
  /** Exports what has ended and is not exported yet. */
  flush(): Promise<void>;
}

const kept = new WeakMap<TracingSettings, Tracing>();
let contextManagerOn = false;

/** The env's tracing, or null when it is off. */
export function tracingFor(env: object, logger: AdminLogger = new JsonAdminLogger()): Tracing | null {
  const config = settings(env).tracing;
  if (!config) return null;
  let tracing = kept.get(config);
  if (!tracing) {
    tracing = buildTracing(config, logger);
    kept.set(config, tracing);
  }
  return tracing;
}

function buildTracing(config: TracingSettings, logger: AdminLogger): Tracing {
  if (!contextManagerOn) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerOn = true;
  }
  const options = { url: config.tracesUrl, headers: { ...config.headers }, timeoutMillis: EXPORT_TIMEOUT_MS };
  const exporter =
    config.protocol === "http/json" ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
  const flusher = new SpanFlusher(exporter, config.scheduleDelayMs, config.tracesUrl, logger);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      "service.name": config.serviceName,
      "service.version": SERVICE_VERSION,
      "cloud.provider": "cloudflare",
      "cloud.platform": "cloudflare.workers",
    }),
    sampler: samplerOf(config),
    spanProcessors: [flusher],
  });
  const tracing: Tracing = {
    tracer: provider.getTracer(TRACER_NAME, SERVICE_VERSION),
    settings: config,
    flush: () => flusher.flush(),
  };
  return tracing;
}

function samplerOf(config: TracingSettings): Sampler {
  switch (config.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(config.ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
  }
}

// The tracing a span was made by rides in the context with it: code far below (a model call, an MCP request) makes
// its child spans without being handed a tracer.
const TRACING_KEY = createContextKey("aptix-edge tracing");

/** The context of `span`, made by `tracing`, under `parent`. */
export function contextWith(tracing: Tracing, span: Span, parent: Context = context.active()): Context {
  return trace.setSpan(parent, span).setValue(TRACING_KEY, tracing);
}

/** The tracing of the active context, when a span of ours is active. */
export function activeTracing(): Tracing | null {
  const value = context.active().getValue(TRACING_KEY);
  return value === undefined ? null : (value as Tracing);
}

/** A child of the active span (null when no span of ours is active: tracing is off, or nothing traces this). */
export function startChildSpan(name: string, options: SpanOptions): { span: Span; context: Context } | null {
  const tracing = activeTracing();
  if (!tracing) return null;
  const parent = context.active();
  const span = tracing.tracer.startSpan(name, options, parent);
  return { span, context: contextWith(tracing, span, parent) };
}

/**
 * Ends `span` off the path of what it measured: its end time is `endTime` (now, by default), and `finish` (its last
 * attributes) and the end itself run in a later task, inside the request's waitUntil (an event `finish` adds takes
 * `endTime`). A span that ends as a request answers is thus recorded after the reply is handed back, and one that
 * ends mid-turn (a model call, a tool call) while the turn goes on; its export is later still. Whatever `finish`
 * reads must not change meanwhile.
 */
export function endAfterReply(span: Span, finish?: (endTime: number) => void, endTime = Date.now()): void {
  // A span that records nothing (unsampled) has nothing to defer.
  if (!span.isRecording()) {
    span.end(endTime);
    return;
  }
  inRequest(
    new Promise((resolve) => setTimeout(resolve, 0)).then(() => {
      try {
        finish?.(endTime);
      } finally {
        span.end(endTime);
      }
    }),
  );
}

const w3c = new W3CTraceContextPropagator();
const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};
const recordGetter: TextMapGetter<Readonly<Record<string, string>>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};
const recordSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The W3C trace context an incoming request carries (`traceparent`, `tracestate`), as a parent context. */
export function contextFromHeaders(headers: Headers): Context {
  return w3c.extract(ROOT_CONTEXT, headers, headerGetter);
}

/** The parent context a carrier (a session object's caller, an MCP request's `_meta`) holds. */
export function contextFromCarrier(carrier: Readonly<Record<string, string>> | undefined): Context {
  return carrier ? w3c.extract(ROOT_CONTEXT, carrier, recordGetter) : ROOT_CONTEXT;
}

/** A trace context as a carrier: `traceparent` (and `tracestate`), or {} when no span of ours is active. */
export function traceCarrier(from: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (from.getValue(TRACING_KEY) === undefined) return carrier;
  w3c.inject(from, carrier, recordSetter);
  return carrier;
}

/**
 * `fetch` that sends the active trace context along (`traceparent`, `tracestate`), so the request shows in the
 * model provider's or MCP server's own trace; without an active span of ours it is plain fetch.
 */
export const tracedFetch: typeof fetch = (input, init) => {
  const carrier = traceCarrier();
  if (carrier.traceparent === undefined) return fetch(input, init);
  const given = init?.headers ?? (input instanceof Request ? input.headers : undefined);
  return fetch(input, { ...init, headers: withTraceHeaders(given, carrier) });
};

/** `given` with the carrier's headers in place of any of its own: a plain record (our model clients') stays one. */
function withTraceHeaders(given: HeadersInit | undefined, carrier: Record<string, string>): HeadersInit {
  if (given === undefined) return carrier;
  if (!isHeaderRecord(given)) return putTraceContext(new Headers(given), carrier);
  const headers: Record<string, string> = {};
  for (const name in given) {
    const lower = name.toLowerCase();
    if (lower !== "traceparent" && lower !== "tracestate") headers[name] = given[name] as string;
  }
  return Object.assign(headers, carrier);
}

/** `headers` with `carrier`'s trace context in place of any they held (`traceparent`, `tracestate`). */
export function putTraceContext(headers: Headers, carrier: Readonly<Record<string, string>>): Headers {
  headers.delete("traceparent");
  headers.delete("tracestate");
  for (const name in carrier) headers.set(name, carrier[name] as string);
  return headers;
}

function isHeaderRecord(given: HeadersInit): given is Record<string, string> {
  return !(given instanceof Headers) && !(Symbol.iterator in given);
}

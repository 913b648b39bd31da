// Reads, from a test in workerd, the spans the Worker exported to the OTLP receiver (started in Node by
// global-setup.ts), through its control server at env.TEST_OTLP_CONTROL_URL; and finds spans among them.
import { env } from "cloudflare:workers";
import { z } from "zod";
import { type ExportRequestRecord, ExportRequestRecordSchema, type SpanRecord, SpanRecordSchema } from "./span-record";

const POLL_INTERVAL_MS = 50;

export interface SpansOfTraceOptions {
  /** What the test waits for; by default, any span at all. Name every export the test expects (several batches). */
  until?: (spans: SpanRecord[]) => boolean;
  /** How long to wait for `until` before answering with what arrived. */
  timeoutMs?: number;
}

async function control(path: string, init?: RequestInit): Promise<Response> {
  const response = await fetch(`${env.TEST_OTLP_CONTROL_URL}${path}`, init);
  if (!response.ok) throw new Error(`OTLP control server answered ${path} with ${response.status}`);
  return response;
}

async function receivedSpans(traceId: string): Promise<SpanRecord[]> {
  const response = await control(`/spans?traceId=${encodeURIComponent(traceId)}`);
  return z.array(SpanRecordSchema).parse(await response.json());
}

/**
 * The spans of one trace at the receiver, once `until` holds of them. Exports run after the response (in
 * waitUntil), so they arrive a little after the request a test made; this waits for them, up to `timeoutMs`, and
 * then answers with what did arrive, so the test's own assertions fail with a readable difference rather than here.
 */
export async function spansOfTrace(traceId: string, options: SpansOfTraceOptions = {}): Promise<SpanRecord[]> {
  const { until = (spans) => spans.length > 0, timeoutMs = 5000 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spans = await receivedSpans(traceId);
    if (until(spans) || Date.now() >= deadline) return spans;
    await scheduler.wait(POLL_INTERVAL_MS);
  }
}

/**
 * Forgets every span and request at the receiver: those of the other test files running beside this one too
 * (they share the receiver), so a test should look at its own trace rather than clear.
 */
export async function clearSpans(): Promise<void> {
  await control("/spans", { method: "DELETE" });
}

/** The export requests the receiver took (with their headers), or those carrying spans of `traceId`. */
export async function exportRequests(traceId?: string): Promise<ExportRequestRecord[]> {
  const query = traceId === undefined ? "" : `?traceId=${encodeURIComponent(traceId)}`;
  return z.array(ExportRequestRecordSchema).parse(await (await control(`/requests${query}`)).json());
}

/** The one span named `name`; throws, naming the spans there are, when there is none or more than one. */
export function spanNamed(spans: SpanRecord[], name: string): SpanRecord {
  const named = spans.filter((span) => span.name === name);
  if (named.length === 1 && named[0]) return named[0];
  const names = spans.map((span) => span.name).join(", ") || "none";
  throw new Error(`${named.length} spans named "${name}" (the spans: ${names})`);
}

/** A new trace a client starts: its id, the client's span in it, and the `traceparent` that says so. */
export function newTrace(sampled = true): { traceId: string; parentId: string; traceparent: string } {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-${sampled ? "01" : "00"}` };
}

/** The spans whose parent is `parent`, in the order they arrived. */
export function childrenOf(spans: SpanRecord[], parent: SpanRecord): SpanRecord[] {
  return spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
}

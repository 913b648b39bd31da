// The span processor: ended spans wait in the isolate, and go out in one OTLP request after the response, inside
// waitUntil: once the span that ends is the last open one of its local tree (a request's server span, a session
// object's run of a turn, a streamed passthrough call that outlived its request's span), the isolate's batch leaves
// `delayMs` later (OTEL_BSP_SCHEDULE_DELAY), with every span other requests ended meanwhile. Nothing is exported on
// a reply's path, a busy isolate sends one export a delay rather than one a request, and an export that fails costs
// one warning a minute, never a request.

import { waitUntil } from "cloudflare:workers";
import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace";
import type { AdminLogger } from "../admin-logger";

/** Past this many waiting spans, they go out at once. */
const MAX_WAITING = 512;
/** One warning per this long at most, however many exports fail. */
const WARN_EVERY_MS = 60_000;
/** Spans that ended while nothing could export them are dropped past this many, oldest first. */
const MAX_KEPT = 4_096;
/** Open spans tracked past this many are forgotten (spans of requests cut off before they ended). */
const MAX_OPEN = 10_000;
/**
 * A scheduled export that has not run this long after it was due is taken for lost (the context that waited for it
 * went away), and the next span to end schedules another.
 */
const LOST_AFTER_MS = 30_000;

export class SpanFlusher implements SpanProcessor {
  private waiting: ReadableSpan[] = [];
  /** Spans started and not ended in this isolate, by id: a span whose parent is among them is exported with it. */
  private readonly open = new Set<string>();
  /** When the scheduled export is due (null: none is scheduled). */
  private dueAt: number | null = null;
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly exporter: SpanExporter,
    /** How long a batch waits for company once it is due. */
    private readonly delayMs: number,
    /** The collector's URL, for the warning (its headers, which may hold a key, are never logged). */
    private readonly url: string,
    private readonly logger: AdminLogger,
  ) {}

  onStart(span: { spanContext(): { spanId: string } }): void {
    if (this.open.size >= MAX_OPEN) this.open.clear();
    this.open.add(span.spanContext().spanId);
  }

  onEnd(span: ReadableSpan): void {
    this.open.delete(span.spanContext().spanId);
    this.waiting.push(span);
    if (this.waiting.length > MAX_KEPT) this.waiting.splice(0, this.waiting.length - MAX_KEPT);
    const parent = span.parentSpanContext;
    const lastOfTree = !parent || parent.isRemote === true || !this.open.has(parent.spanId);
    if (this.waiting.length >= MAX_WAITING) inRequest(this.flush());
    else if (lastOfTree) this.schedule(this.delayMs);
  }

  /**
   * `delayMs` later (a later task at least), inside the current request's waitUntil: a request's spans end in the
   * tasks right after its reply (endAfterReply), and an export started at once would encode them while the isolate
   * may be serving the next request. Spans that end meanwhile go in the same export.
   */
  private schedule(delayMs: number): void {
    const now = Date.now();
    if (this.dueAt !== null && now - this.dueAt < LOST_AFTER_MS) return;
    const dueAt = now + delayMs;
    this.dueAt = dueAt;
    const exported = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => {
      if (this.dueAt === dueAt) this.dueAt = null;
      return this.flush();
    });
    inRequest(exported);
  }

  async flush(): Promise<void> {
    const batch = this.waiting.splice(0);
    if (batch.length === 0) return;
    const result = await new Promise<{ code: ExportResultCode; error?: Error }>((resolve) => {
      try {
        this.exporter.export(batch, resolve);
      } catch (error) {
        resolve({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
      }
    });
    if (result.code !== ExportResultCode.SUCCESS) this.warn(batch.length, result.error);
  }

  private warn(spans: number, error: Error | undefined): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.logger.addCustomEvent("Warning", "[Tracing_ExportFailed]", "Spans could not be sent to the collector.", [
      ["Collector", safeUrl(this.url)],
      ["Spans", String(spans)],
      ["Error", error?.message ?? "unknown"],
    ]);
  }

  forceFlush(): Promise<void> {
    return this.flush();
  }

  shutdown(): Promise<void> {
    return this.flush();
  }
}

/** Work the current request waits for after its reply (waitUntil); outside a request it goes on by itself. */
export function inRequest(work: Promise<unknown>): void {
  try {
    waitUntil(work);
  } catch {
    work.catch(() => undefined);
  }
}

/** The collector's origin and path, without credentials or a query (where a hosted backend may put its key). */
function safeUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.origin}${url.pathname}`;
  } catch {
    return "(not a URL)";
  }
}

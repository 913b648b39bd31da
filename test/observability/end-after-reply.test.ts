// A span's last attributes and its end are recorded after the reply (src/observability/tracing/tracing.ts,
// endAfterReply): nothing of it runs on the caller's path, and the exported span still ends when the step did,
// with what `finish` set.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { contextFromCarrier, endAfterReply, tracingFor } from "../../src/observability/tracing/tracing";
import { newTrace, spanNamed, spansOfTrace } from "./spans";

/** A span of the test env's tracing, under a fresh trace. */
function startedSpan(name: string) {
  const tracing = tracingFor(env);
  if (!tracing) throw new Error("the traced project has tracing on");
  const trace = newTrace();
  const span = tracing.tracer.startSpan(name, {}, contextFromCarrier({ traceparent: trace.traceparent }));
  return { span, traceId: trace.traceId };
}

describe("endAfterReply", () => {
  it("runs nothing of the span's end on the caller's path", () => {
    const { span } = startedSpan("end-after-reply on path");
    let finished = false;
    endAfterReply(span, () => {
      finished = true;
    });
    expect([finished, span.isRecording()]).toEqual([false, true]);
  });

  it("exports the span ended at the given time, with what finish set", async () => {
    const { span, traceId } = startedSpan("end-after-reply exported");
    const endTime = Date.now() + 5;
    endAfterReply(
      span,
      (at) => {
        span.setAttribute("test.finished_at", at);
        span.addEvent("test.event", {}, at);
      },
      endTime,
    );
    const exported = spanNamed(await spansOfTrace(traceId), "end-after-reply exported");
    expect([exported.endMs, exported.attributes["test.finished_at"], exported.events[0]?.timeMs]).toEqual([
      endTime,
      endTime,
      endTime,
    ]);
  });
});

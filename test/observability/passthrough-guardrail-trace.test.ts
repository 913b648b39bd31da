// The passthrough's guardrail decisions in its trace: a span event `guardrail` on the request's span (the input's,
// and a stream's output checked at its end, before the span ends), on the server span for a request blocked before
// its model call; what was found by kind, never the matched text.
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { EMAIL, guardedOrg, piiEmail } from "../passthrough/guardrails-harness";
import { BASE_URL, type TestKey, type TestWorker } from "../passthrough/harness";
import { SPAN_KIND, type SpanRecord } from "./span-record";
import { newTrace, spansOfTrace } from "./spans";

function chat(key: TestKey, through: TestWorker, body: Record<string, unknown>, traceparent: string) {
  return through.fetch(`${BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", traceparent },
    body: JSON.stringify({ model: "scripted-model", ...body }),
  });
}

const guardrailEvents = (span: SpanRecord | undefined) =>
  (span?.events ?? []).filter((event) => event.name === "guardrail").map((event) => event.attributes);

describe("the passthrough's guardrail decisions in its trace", () => {
  it("are span events on the request's span, a stream's output one included, without the matched text", async () => {
    const guarded = await guardedOrg([{ ...piiEmail("flag"), name: "mail_in" }, piiEmail("flag", ["output"])]);
    const script = await scriptUpstream([{ type: "echo" }]);
    const trace = newTrace();
    const response = await chat(
      guarded.key,
      guarded.through,
      { stream: true, messages: [{ role: "user", content: `Mail ${EMAIL} ${script.marker}` }] },
      trace.traceparent,
    );
    expect(response.status).toBe(200);
    await response.text();
    const spans = await spansOfTrace(trace.traceId, {
      until: (all) => guardrailEvents(all.find((s) => s.kind === SPAN_KIND.client)).length >= 2,
    });
    const events = guardrailEvents(spans.find((s) => s.kind === SPAN_KIND.client));
    expect(events).toEqual([
      {
        "aptix.guardrail.name": "mail_in",
        "aptix.guardrail.point": "input",
        "aptix.guardrail.action": "flag",
        "aptix.guardrail.found": "email",
      },
      {
        "aptix.guardrail.name": "pii",
        "aptix.guardrail.point": "output",
        "aptix.guardrail.action": "flag",
        "aptix.guardrail.found": "email",
      },
    ]);
    expect(JSON.stringify(spans)).not.toContain(EMAIL);
  });

  it("go on the server span for a request blocked before its model call", async () => {
    const guarded = await guardedOrg([piiEmail("block")]);
    const trace = newTrace();
    const response = await chat(
      guarded.key,
      guarded.through,
      { messages: [{ role: "user", content: `Mail ${EMAIL}` }] },
      trace.traceparent,
    );
    expect(response.status).toBe(400);
    const spans = await spansOfTrace(trace.traceId, { until: (all) => all.length >= 1 });
    expect(spans.map((s) => s.kind)).toEqual([SPAN_KIND.server]);
    expect(guardrailEvents(spans[0])).toEqual([
      {
        "aptix.guardrail.name": "pii",
        "aptix.guardrail.point": "input",
        "aptix.guardrail.action": "block",
        "aptix.guardrail.found": "email",
      },
    ]);
  });
});

// Content on spans is opt-in (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT), and even then no secret the
// Worker knows leaves it: the session object's recorder (src/session/turn-recorder.ts) with content capture on,
// exporting through the real exporter to the receiver, fed messages, answers, arguments and results that quote the
// LLM key, a route's key, an MCP token, the collector's header and an aptix key.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { tracingFor } from "../../src/observability/tracing/tracing";
import type { TimelineStep } from "../../src/observability/turn-observer";
import { secretRedactor } from "../../src/secret-redaction";
import { TurnRecorder } from "../../src/session/turn-recorder";
import type { SpanRecord } from "./span-record";
import { newTrace, spansOfTrace } from "./spans";

const ROUTE = { name: "default", provider: "openai_compatible", model: "scripted-model" };

/** A run with one model call and one tool call, each quoting `secrets`, recorded under a fresh trace. */
async function recordedRun(
  vars: Record<string, string>,
  secrets: string[],
  orgKeys: string[] = [],
): Promise<SpanRecord[]> {
  const testEnv = { ...env, ...vars };
  const tracing = tracingFor(testEnv);
  const { traceId, traceparent } = newTrace();
  const steps: TimelineStep[] = [];
  const recorder = new TurnRecorder({
    steps: { add: (_turnId, step) => steps.push(step) },
    tracing,
    parent: { traceparent },
    sessionId: "session-1",
    mode: () => "general",
    redact: secretRedactor(testEnv, orgKeys),
  });
  const quoted = secrets.join(" and ");
  recorder.runStarted("turn-1", "start");
  const call = recorder.modelCall(ROUTE, () => [{ role: "user", content: `my keys: ${quoted}` }]);
  await call.within(async () => undefined);
  call.end({
    route: ROUTE,
    usage: null,
    finishReason: "stop",
    output: { role: "assistant", content: `I saw ${quoted}` },
  });
  recorder
    .toolCall({ id: "call_1", name: "agent_hello_world", ranOn: "server", arguments: JSON.stringify({ q: quoted }) })
    .end({ result: `result with ${quoted}` });
  recorder.runEnded("completed", { iterations: 1 });
  return spansOfTrace(traceId, { until: (spans) => spans.length >= 3 });
}

/** Secrets of each kind: the LLM key, a route's key (by its secret's name), an MCP token, the collector's header, an aptix key. */
const secrets = (): string[] => [
  env.LLM_API_KEY ?? "",
  env.UPSTREAM_A_KEY ?? "",
  env.MCP_TEST_TOKEN,
  "Bearer otlp-test-token",
  // The collector's token alone, without its scheme.
  "otlp-test-token",
  "ak_0123456789abcdefghij",
];

describe("content on spans", () => {
  it("is recorded with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, in the GenAI message shape", async () => {
    const spans = await recordedRun({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }, ["plain words"]);
    const chat = spans.find((s) => s.name === "chat scripted-model");
    expect(JSON.parse(String(chat?.attributes["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "my keys: plain words" }] },
    ]);
    expect(JSON.parse(String(chat?.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "I saw plain words" }] },
    ]);
    const tool = spans.find((s) => s.name === "execute_tool agent_hello_world");
    expect([tool?.attributes["gen_ai.tool.call.arguments"], tool?.attributes["gen_ai.tool.call.result"]]).toEqual([
      JSON.stringify({ q: "plain words" }),
      "result with plain words",
    ]);
  });

  it("never carries a secret the Worker knows, even opted in", async () => {
    const known = secrets();
    expect(known.every((s) => s.length >= 6)).toBe(true);
    const spans = await recordedRun({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }, known);
    const exported = JSON.stringify(spans);
    expect(exported).toContain("[redacted]");
    for (const secret of known) expect(exported).not.toContain(secret);
  });

  it("never carries an org's own provider key in play (the session's org's routes' keys), even opted in", async () => {
    const orgKey = "sk-an-org-stored-this-key-0123";
    const spans = await recordedRun({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }, [orgKey], [orgKey]);
    expect(JSON.stringify(spans)).not.toContain(orgKey);
  });

  it("is not recorded by default", async () => {
    const spans = await recordedRun({}, ["plain words"]);
    expect(spans.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(spans)).not.toContain("plain words");
  });
});

// The tracing settings (src/observability/tracing/tracing-settings.ts): the standard OTEL_* variables, read from the
// Worker's env; off without an endpoint; a malformed value named, never replaced by a default.
import { describe, expect, it } from "vitest";
import { parseSettings, SettingsError } from "../../src/settings";
import { parseKeyValues } from "../../src/tracing-settings";

describe("tracing settings", () => {
  it("are off when no endpoint is set", () => {
    expect(parseSettings({}).tracing).toBeNull();
  });

  it("are off with an endpoint when OTEL_SDK_DISABLED is true", () => {
    const settings = parseSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example", OTEL_SDK_DISABLED: "true" });
    expect(settings.tracing).toBeNull();
  });

  it("send traces to the endpoint's /v1/traces, as protobuf, parent-based and always on by default", () => {
    const tracing = parseSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/" }).tracing;
    expect(tracing).toEqual({
      tracesUrl: "https://otel.example/v1/traces",
      headers: {},
      protocol: "http/protobuf",
      serviceName: "aptix-edge",
      resourceAttributes: {},
      sampler: "parentbased_always_on",
      ratio: 1,
      captureContent: false,
      scheduleDelayMs: 1000,
    });
  });

  it("take the traces endpoint as it is when it is set", () => {
    const tracing = parseSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/custom/path",
    }).tracing;
    expect(tracing?.tracesUrl).toBe("https://traces.example/custom/path");
  });

  it("read headers and resource attributes as percent-encoded key=value pairs", () => {
    const tracing = parseSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc, x-team = blue",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=staging",
    }).tracing;
    expect([tracing?.headers, tracing?.resourceAttributes]).toEqual([
      { authorization: "Bearer abc", "x-team": "blue" },
      { "deployment.environment": "staging" },
    ]);
  });

  it("read the sampler and its ratio", () => {
    const tracing = parseSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    }).tracing;
    expect([tracing?.sampler, tracing?.ratio]).toEqual(["parentbased_traceidratio", 0.25]);
  });

  for (const [value, capture] of [
    ["true", true],
    ["SPAN_ONLY", true],
    ["SPAN_AND_EVENT", true],
    ["false", false],
    ["NO_CONTENT", false],
  ] as const) {
    it(`capture content when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=${value}: ${capture}`, () => {
      const tracing = parseSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value,
      }).tracing;
      expect(tracing?.captureContent).toBe(capture);
    });
  }

  for (const [name, value, problem] of [
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "otel.example:4318", "must be an http(s) URL or empty"],
    ["OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "must be 'http/protobuf' or 'http/json' (grpc is not offered)"],
    [
      "OTEL_TRACES_SAMPLER",
      "xray",
      "must be one of: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio",
    ],
    ["OTEL_TRACES_SAMPLER_ARG", "1.5", "must be a number from 0 to 1"],
    ["OTEL_BSP_SCHEDULE_DELAY", "60000", "must be a whole number of milliseconds up to 10000"],
    [
      "OTEL_EXPORTER_OTLP_HEADERS",
      "=abc",
      "must be key=value pairs, comma-separated (e.g. authorization=Bearer%20abc)",
    ],
    [
      "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
      "EVENT_ONLY",
      "must be one of: true, false, NO_CONTENT, SPAN_ONLY, SPAN_AND_EVENT (no log events are exported)",
    ],
  ] as const) {
    it(`refuse ${name}=${value}, naming the variable`, () => {
      expect(() => parseSettings({ [name]: value })).toThrow(new SettingsError(name, problem));
    });
  }

  it("refuse a header pair whose value is not percent-encoding", () => {
    expect(parseKeyValues("authorization=100%")).toBe(
      "must be key=value pairs whose values are percent-encoded (%20 for a space)",
    );
  });
});

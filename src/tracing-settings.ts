// The tracing settings, by the standard OpenTelemetry variables (read from the Worker's env, like every setting:
// the SDK's own reading of process.env does not run on Workers). An empty endpoint turns tracing off.
import { z } from "zod";

export type OtlpProtocol = "http/protobuf" | "http/json";

export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

export interface TracingSettings {
  /** Where spans go (the traces URL itself: `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`). */
  tracesUrl: string;
  /** Sent with every export (a collector's or hosted backend's key): a secret, never logged. */
  headers: Readonly<Record<string, string>>;
  protocol: OtlpProtocol;
  serviceName: string;
  resourceAttributes: Readonly<Record<string, string>>;
  sampler: SamplerName;
  /** The sampler's ratio (traceidratio, parentbased_traceidratio). */
  ratio: number;
  /** Prompts, completions and tool arguments and results on spans (the GenAI conventions' content capture). */
  captureContent: boolean;
  /** How long an isolate's ended spans wait for company before they are exported (OTEL_BSP_SCHEDULE_DELAY). */
  scheduleDelayMs: number;
}

const SAMPLERS: readonly SamplerName[] = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

/** An http(s) URL or "". */
const otlpUrl = z
  .string()
  .trim()
  .refine((v) => v === "" || /^https?:\/\/[^\s]+$/.test(v), "must be an http(s) URL or empty")
  .default("");

/**
 * `key=value` pairs, comma-separated, values percent-decoded (the OTLP exporter's format). A pair without a key
 * or a `=` is refused rather than dropped: a collector's key that silently vanished would look like a broken
 * collector.
 */
export function parseKeyValues(text: string): Record<string, string> | string {
  const pairs: Record<string, string> = {};
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    const key = at < 0 ? "" : item.slice(0, at).trim();
    if (key === "") return "must be key=value pairs, comma-separated (e.g. authorization=Bearer%20abc)";
    try {
      pairs[decodeURIComponent(key)] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      return "must be key=value pairs whose values are percent-encoded (%20 for a space)";
    }
  }
  return pairs;
}

const keyValues = z
  .string()
  .transform((v, ctx) => {
    const parsed = parseKeyValues(v);
    if (typeof parsed === "string") {
      ctx.addIssue({ code: "custom", message: parsed });
      return z.NEVER;
    }
    return parsed;
  })
  .default({});

const trueFalse = z
  .enum(["true", "false"], { error: "must be 'true' or 'false'" })
  .transform((v) => v === "true")
  .default(false);

/** The OTEL_* vars, as src/settings.ts's schema takes them. */
export const TRACING_VARS = {
  /** "true": no span is made or exported, whatever else is set. */
  OTEL_SDK_DISABLED: trueFalse,
  /** The collector's base URL (traces go to its /v1/traces); "" (the default): tracing off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
  /** The traces URL itself, used as it is; it wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl,
  /** Secret (`wrangler secret put OTEL_EXPORTER_OTLP_HEADERS`): headers sent with each export. */
  OTEL_EXPORTER_OTLP_HEADERS: keyValues,
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(["http/protobuf", "http/json"], { error: "must be 'http/protobuf' or 'http/json' (grpc is not offered)" })
    .default("http/protobuf"),
  OTEL_SERVICE_NAME: z.string().trim().default("aptix-edge"),
  OTEL_RESOURCE_ATTRIBUTES: keyValues,
  OTEL_TRACES_SAMPLER: z
    .enum(SAMPLERS as [SamplerName, ...SamplerName[]], { error: `must be one of: ${SAMPLERS.join(", ")}` })
    .default("parentbased_always_on"),
  /**
   * Milliseconds an isolate's ended spans wait for more before one export takes them all (the batch span
   * processor's variable). Shorter than the SDK's 5000: a Worker's export must finish within its request's
   * waitUntil.
   */
  OTEL_BSP_SCHEDULE_DELAY: z
    .union([z.number(), z.string().trim().regex(/^\d+$/, "must be a whole number of milliseconds up to 10000")])
    .transform(Number)
    .pipe(z.number().int().min(0).max(10_000, "must be a whole number of milliseconds up to 10000"))
    .default(1_000),
  OTEL_TRACES_SAMPLER_ARG: z
    .string()
    .trim()
    .refine((v) => v === "" || (/^\d*\.?\d+$/.test(v) && Number(v) <= 1), "must be a number from 0 to 1")
    .transform((v) => (v === "" ? 1 : Number(v)))
    .default(1),
  /**
   * The GenAI conventions' content capture: "false"/"NO_CONTENT" (the default) records no prompt, completion,
   * tool argument or result; "true"/"SPAN_ONLY"/"SPAN_AND_EVENT" records them on spans (secrets removed).
   */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z
    .enum(["true", "false", "NO_CONTENT", "SPAN_ONLY", "SPAN_AND_EVENT"], {
      error: "must be one of: true, false, NO_CONTENT, SPAN_ONLY, SPAN_AND_EVENT (no log events are exported)",
    })
    .transform((v) => v === "true" || v === "SPAN_ONLY" || v === "SPAN_AND_EVENT")
    .default(false),
};

type Vars = { [K in keyof typeof TRACING_VARS]: z.output<(typeof TRACING_VARS)[K]> };

/** The tracing settings of the vars; null when tracing is off (no endpoint, or disabled). */
export function tracingOf(v: Vars): TracingSettings | null {
  if (v.OTEL_SDK_DISABLED) return null;
  const base = v.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "");
  const tracesUrl = v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base ? `${base}/v1/traces` : "");
  if (tracesUrl === "") return null;
  return {
    tracesUrl,
    headers: v.OTEL_EXPORTER_OTLP_HEADERS,
    protocol: v.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: v.OTEL_SERVICE_NAME || "aptix-edge",
    resourceAttributes: v.OTEL_RESOURCE_ATTRIBUTES,
    sampler: v.OTEL_TRACES_SAMPLER,
    ratio: v.OTEL_TRACES_SAMPLER_ARG,
    captureContent: v.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    scheduleDelayMs: v.OTEL_BSP_SCHEDULE_DELAY,
  };
}

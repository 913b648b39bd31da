// The one shape a received span has in the tests, whichever OTLP protocol carried it: what the receiver records in
// Node (otlp-receiver.ts) and what a test in workerd reads back through the control endpoint (spans.ts). Only zod
// here, so both sides can import it.
import { z } from "zod";

export const OtlpProtocolSchema = z.enum(["http/protobuf", "http/json"]);
export type OtlpProtocol = z.infer<typeof OtlpProtocolSchema>;

/**
 * An attribute's value, unwrapped from OTLP's AnyValue: `intValue` as a number (int64 beyond 2^53 loses precision;
 * no attribute the tests look at comes near), `bytesValue` as its base64, `kvlistValue` as an object.
 */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export const AttrValueSchema: z.ZodType<AttrValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(AttrValueSchema),
    z.record(z.string(), AttrValueSchema),
  ]),
);
export const AttributesSchema = z.record(z.string(), AttrValueSchema);
export type Attributes = z.infer<typeof AttributesSchema>;

/** OTLP's span kinds (the proto enum: the API's `SpanKind` plus one, since the proto keeps 0 for unspecified). */
export const SPAN_KIND = { unspecified: 0, internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
/** OTLP's status codes. */
export const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

export const SpanRecordSchema = z.object({
  protocol: OtlpProtocolSchema,
  resource: AttributesSchema,
  scope: z.object({ name: z.string(), version: z.string() }),
  /** Lowercase hex, 32 digits. */
  traceId: z.string(),
  /** Lowercase hex, 16 digits. */
  spanId: z.string(),
  /** Null for a root span (OTLP sends it empty or not at all). */
  parentSpanId: z.string().nullable(),
  name: z.string(),
  kind: z.number(),
  /** Epoch milliseconds, to the microsecond (the wire's unix nanoseconds / 1e6). */
  startMs: z.number(),
  endMs: z.number(),
  attributes: AttributesSchema,
  events: z.array(z.object({ name: z.string(), timeMs: z.number(), attributes: AttributesSchema })),
  links: z.array(z.object({ traceId: z.string(), spanId: z.string(), attributes: AttributesSchema })),
  status: z.object({ code: z.number(), message: z.string() }),
});
export type SpanRecord = z.infer<typeof SpanRecordSchema>;

/** One POST to /v1/traces, whatever became of it. */
export const ExportRequestRecordSchema = z.object({
  /** Null when the content type was neither protocol's (answered 415). */
  protocol: OtlpProtocolSchema.nullable(),
  /** As they arrived (names lowercase; repeated ones joined with ", "). */
  headers: z.record(z.string(), z.string()),
  spanCount: z.number(),
  /** The traces its spans belong to, each once, so a test can find its own exports among other files'. */
  traceIds: z.array(z.string()),
  /** Why the body was refused (400, 415), or null when it was taken. */
  error: z.string().nullable(),
});
export type ExportRequestRecord = z.infer<typeof ExportRequestRecordSchema>;

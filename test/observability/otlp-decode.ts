// Turns an OTLP/HTTP trace export's body into span records (span-record.ts), the same records for both protocols.
// http/protobuf is read field by field with opentelemetry-proto's field numbers (otlp-protobuf.ts) into the shape
// the proto3 JSON mapping gives, which is then parsed as an http/json body is. Node only.
import { z } from "zod";
import { EMPTY_EXPORT_RESPONSE, readExportTraceServiceRequest } from "./otlp-protobuf.ts";
import type { Attributes, AttrValue, OtlpProtocol, SpanRecord } from "./span-record.ts";

/** An empty ExportTraceServiceResponse (full success), what a collector answers an http/protobuf export with. */
export const EMPTY_PROTOBUF_RESPONSE: Uint8Array = EMPTY_EXPORT_RESPONSE;

// The request as the proto3 JSON mapping has it, which is also what otlp-protobuf.ts reads (with int64 as
// strings and enums as numbers). The two differ only in how ids are written: hex in OTLP/JSON, base64 from protobuf.
type WireAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  arrayValue?: { values?: WireAnyValue[] };
  kvlistValue?: { values?: WireKeyValue[] };
  bytesValue?: string;
};
type WireKeyValue = { key: string; value?: WireAnyValue };
const AnyValueSchema: z.ZodType<WireAnyValue> = z.lazy(() =>
  z.object({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string(), z.number()]).optional(),
    // proto3 JSON writes NaN and the infinities as strings.
    doubleValue: z.union([z.number(), z.string()]).optional(),
    arrayValue: z.object({ values: z.array(AnyValueSchema).optional() }).optional(),
    kvlistValue: z.object({ values: z.array(KeyValueSchema).optional() }).optional(),
    bytesValue: z.string().optional(),
  }),
);
const KeyValueSchema: z.ZodType<WireKeyValue> = z.lazy(() =>
  z.object({ key: z.string(), value: AnyValueSchema.optional() }),
);
const KeyValuesSchema = z.array(KeyValueSchema).optional();
const NanosSchema = z.union([z.string(), z.number()]).optional();
const IdSchema = z.string().optional();

const WireSpanSchema = z.object({
  traceId: IdSchema,
  spanId: IdSchema,
  parentSpanId: IdSchema,
  name: z.string().optional(),
  kind: z.number().optional(),
  startTimeUnixNano: NanosSchema,
  endTimeUnixNano: NanosSchema,
  attributes: KeyValuesSchema,
  events: z
    .array(z.object({ name: z.string().optional(), timeUnixNano: NanosSchema, attributes: KeyValuesSchema }))
    .optional(),
  links: z.array(z.object({ traceId: IdSchema, spanId: IdSchema, attributes: KeyValuesSchema })).optional(),
  status: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
});

const ExportTraceServiceRequestSchema = z.object({
  resourceSpans: z
    .array(
      z.object({
        resource: z.object({ attributes: KeyValuesSchema }).optional(),
        scopeSpans: z
          .array(
            z.object({
              scope: z.object({ name: z.string().optional(), version: z.string().optional() }).optional(),
              spans: z.array(WireSpanSchema).optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});
type ExportTraceServiceRequest = z.infer<typeof ExportTraceServiceRequestSchema>;

/** The spans of an http/protobuf export body; throws when it is not an ExportTraceServiceRequest. */
export function decodeProtobufExport(body: Uint8Array): SpanRecord[] {
  const request = ExportTraceServiceRequestSchema.parse(readExportTraceServiceRequest(body));
  return flatten("http/protobuf", request, (base64) => Buffer.from(base64, "base64").toString("hex"));
}

/** The spans of an http/json (OTLP/JSON) export body; throws when it is not one. */
export function decodeJsonExport(body: Uint8Array): SpanRecord[] {
  const request = ExportTraceServiceRequestSchema.parse(JSON.parse(Buffer.from(body).toString("utf8")));
  return flatten("http/json", request, (hex) => hex.toLowerCase());
}

function flatten(protocol: OtlpProtocol, request: ExportTraceServiceRequest, id: (raw: string) => string) {
  const records: SpanRecord[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scope = { name: scopeSpans.scope?.name ?? "", version: scopeSpans.scope?.version ?? "" };
      for (const span of scopeSpans.spans ?? []) {
        records.push({
          protocol,
          resource,
          scope,
          traceId: id(span.traceId ?? ""),
          spanId: id(span.spanId ?? ""),
          parentSpanId: span.parentSpanId ? id(span.parentSpanId) : null,
          name: span.name ?? "",
          kind: span.kind ?? 0,
          startMs: millis(span.startTimeUnixNano),
          endMs: millis(span.endTimeUnixNano),
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: event.name ?? "",
            timeMs: millis(event.timeUnixNano),
            attributes: attributes(event.attributes),
          })),
          links: (span.links ?? []).map((link) => ({
            traceId: id(link.traceId ?? ""),
            spanId: id(link.spanId ?? ""),
            attributes: attributes(link.attributes),
          })),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
        });
      }
    }
  }
  return records;
}

/** Unix nanoseconds (past 2^53, so counted in a bigint) as epoch milliseconds, keeping the microseconds. */
function millis(nanos: string | number | undefined): number {
  if (nanos === undefined) return 0;
  return Number(BigInt(nanos) / 1000n) / 1000;
}

function attributes(list: WireKeyValue[] | undefined): Attributes {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, anyValue(entry.value)]));
}

function anyValue(value: WireAnyValue | undefined): AttrValue {
  if (value?.stringValue !== undefined) return value.stringValue;
  if (value?.boolValue !== undefined) return value.boolValue;
  if (value?.intValue !== undefined) return Number(value.intValue);
  if (value?.doubleValue !== undefined) return Number(value.doubleValue);
  if (value?.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(anyValue);
  if (value?.kvlistValue !== undefined) return attributes(value.kvlistValue.values);
  if (value?.bytesValue !== undefined) return value.bytesValue;
  // An AnyValue with none of its fields set: OTLP's empty value.
  return null;
}

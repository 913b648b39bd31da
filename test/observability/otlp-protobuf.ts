// An OTLP/HTTP protobuf trace export (ExportTraceServiceRequest) read into the proto3 JSON mapping's shape (ids and
// bytes as base64, 64-bit integers as strings, enums as numbers), which otlp-decode.ts then parses as it parses an
// http/json body. The field numbers are opentelemetry-proto's (collector/trace/v1, trace/v1, common/v1,
// resource/v1); fields not listed are skipped, the way every protobuf reader treats unknown fields. The exporters' own
// packages carry no request decoder, and the last one that did (otlp-transformer 0.216) pins an older
// @opentelemetry/api than ours; test/node/otlp-receiver.test.ts shows a span decodes the same over both protocols.

type Scalar = "string" | "bytes" | "bool" | "int64" | "uint32" | "enum" | "fixed64" | "fixed32" | "double";
/** A field: its JSON name, then a scalar type or the name of a message type (a key of MESSAGES), and whether it repeats. */
type Field = readonly [name: string, type: string, repeated?: "repeated"];

const MESSAGES: Record<string, Record<number, Field>> = {
  ExportTraceServiceRequest: { 1: ["resourceSpans", "ResourceSpans", "repeated"] },
  ResourceSpans: {
    1: ["resource", "Resource"],
    2: ["scopeSpans", "ScopeSpans", "repeated"],
    3: ["schemaUrl", "string"],
  },
  Resource: { 1: ["attributes", "KeyValue", "repeated"], 2: ["droppedAttributesCount", "uint32"] },
  ScopeSpans: { 1: ["scope", "InstrumentationScope"], 2: ["spans", "Span", "repeated"], 3: ["schemaUrl", "string"] },
  InstrumentationScope: {
    1: ["name", "string"],
    2: ["version", "string"],
    3: ["attributes", "KeyValue", "repeated"],
    4: ["droppedAttributesCount", "uint32"],
  },
  Span: {
    1: ["traceId", "bytes"],
    2: ["spanId", "bytes"],
    3: ["traceState", "string"],
    4: ["parentSpanId", "bytes"],
    16: ["flags", "fixed32"],
    5: ["name", "string"],
    6: ["kind", "enum"],
    7: ["startTimeUnixNano", "fixed64"],
    8: ["endTimeUnixNano", "fixed64"],
    9: ["attributes", "KeyValue", "repeated"],
    10: ["droppedAttributesCount", "uint32"],
    11: ["events", "Event", "repeated"],
    12: ["droppedEventsCount", "uint32"],
    13: ["links", "Link", "repeated"],
    14: ["droppedLinksCount", "uint32"],
    15: ["status", "Status"],
  },
  Event: {
    1: ["timeUnixNano", "fixed64"],
    2: ["name", "string"],
    3: ["attributes", "KeyValue", "repeated"],
    4: ["droppedAttributesCount", "uint32"],
  },
  Link: {
    1: ["traceId", "bytes"],
    2: ["spanId", "bytes"],
    3: ["traceState", "string"],
    4: ["attributes", "KeyValue", "repeated"],
    5: ["droppedAttributesCount", "uint32"],
    6: ["flags", "fixed32"],
  },
  Status: { 2: ["message", "string"], 3: ["code", "enum"] },
  KeyValue: { 1: ["key", "string"], 2: ["value", "AnyValue"] },
  AnyValue: {
    1: ["stringValue", "string"],
    2: ["boolValue", "bool"],
    3: ["intValue", "int64"],
    4: ["doubleValue", "double"],
    5: ["arrayValue", "ArrayValue"],
    6: ["kvlistValue", "KeyValueList"],
    7: ["bytesValue", "bytes"],
  },
  ArrayValue: { 1: ["values", "AnyValue", "repeated"] },
  KeyValueList: { 1: ["values", "KeyValue", "repeated"] },
};
const SCALARS = new Set<string>(["string", "bytes", "bool", "int64", "uint32", "enum", "fixed64", "fixed32", "double"]);
const isScalar = (type: string): type is Scalar => SCALARS.has(type);

const WIRE = { varint: 0, fixed64: 1, lengthDelimited: 2, fixed32: 5 } as const;

/** A protobuf reader over one message's bytes. */
class Reader {
  private at = 0;
  private readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }

  get done(): boolean {
    return this.at >= this.bytes.length;
  }

  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = this.bytes[this.at++];
      if (byte === undefined) throw new Error("protobuf: a varint runs past the end");
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  }

  take(length: number): Uint8Array {
    if (this.at + length > this.bytes.length) throw new Error("protobuf: a field runs past the end");
    const slice = this.bytes.subarray(this.at, this.at + length);
    this.at += length;
    return slice;
  }

  /** Moves past a field of a type this reader does not use. */
  skipField(wireType: number): void {
    if (wireType === WIRE.varint) this.varint();
    else if (wireType === WIRE.fixed64) this.take(8);
    else if (wireType === WIRE.lengthDelimited) this.take(Number(this.varint()));
    else if (wireType === WIRE.fixed32) this.take(4);
    else throw new Error(`protobuf: wire type ${wireType} is not one proto3 writes`);
  }
}

/** Little-endian reads of a field's bytes, where they lie (a Node Buffer's may be a slice of a shared pool). */
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function scalar(reader: Reader, type: Scalar): unknown {
  switch (type) {
    case "string":
      return new TextDecoder().decode(reader.take(Number(reader.varint())));
    case "bytes":
      return Buffer.from(reader.take(Number(reader.varint()))).toString("base64");
    case "bool":
      return reader.varint() !== 0n;
    case "int64":
      return BigInt.asIntN(64, reader.varint()).toString();
    case "uint32":
    case "enum":
      return Number(BigInt.asIntN(32, reader.varint()));
    case "fixed64":
      return view(reader.take(8)).getBigUint64(0, true).toString();
    case "fixed32":
      return view(reader.take(4)).getUint32(0, true);
    case "double":
      return view(reader.take(8)).getFloat64(0, true);
  }
}

const WIRE_OF: Record<Scalar, number> = {
  string: WIRE.lengthDelimited,
  bytes: WIRE.lengthDelimited,
  bool: WIRE.varint,
  int64: WIRE.varint,
  uint32: WIRE.varint,
  enum: WIRE.varint,
  fixed64: WIRE.fixed64,
  fixed32: WIRE.fixed32,
  double: WIRE.fixed64,
};

function message(bytes: Uint8Array, type: string): Record<string, unknown> {
  const fields = MESSAGES[type] ?? {};
  const reader = new Reader(bytes);
  const object: Record<string, unknown> = {};
  while (!reader.done) {
    const tag = Number(reader.varint());
    const [number, wireType] = [tag >>> 3, tag & 7];
    const field = fields[number];
    const [name, fieldType, repeated] = field ?? ["", "string"];
    const expected = isScalar(fieldType) ? WIRE_OF[fieldType] : WIRE.lengthDelimited;
    if (!field || wireType !== expected) {
      reader.skipField(wireType);
      continue;
    }
    const value = isScalar(fieldType)
      ? scalar(reader, fieldType)
      : message(reader.take(Number(reader.varint())), fieldType);
    if (repeated) object[name] = [...((object[name] as unknown[] | undefined) ?? []), value];
    else object[name] = value;
  }
  return object;
}

/** An http/protobuf trace export body as the proto3 JSON mapping writes it (ids in base64). */
export function readExportTraceServiceRequest(body: Uint8Array): Record<string, unknown> {
  return message(body, "ExportTraceServiceRequest");
}

/** An empty ExportTraceServiceResponse (full success): a message with no field set is zero bytes. */
export const EMPTY_EXPORT_RESPONSE = new Uint8Array(0);

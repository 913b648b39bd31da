// A real OTLP/HTTP trace receiver on loopback (Node), the collector the tracing tests and benchmarks export to: takes
// POST /v1/traces in http/protobuf and http/json (gzipped or not), answers as a collector does, and keeps every span
// as one flat record (span-record.ts) and every request with its headers. A plain module (no Vitest), so bench/ can
// start one too.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { decodeJsonExport, decodeProtobufExport, EMPTY_PROTOBUF_RESPONSE } from "./otlp-decode.ts";
import type { ExportRequestRecord, OtlpProtocol, SpanRecord } from "./span-record.ts";

export interface OtlpReceiverOptions {
  port?: number;
  host?: string;
}

export interface SpanFilter {
  traceId?: string;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (exporters add /v1/traces). */
  url: string;
  /** The spans received so far, in arrival order; those of one trace when `filter.traceId` is given. */
  spans(filter?: SpanFilter): SpanRecord[];
  /** Every POST to /v1/traces so far, in arrival order (the same array throughout: clear() empties it). */
  requests: ExportRequestRecord[];
  /** Forgets every span and request. */
  clear(): void;
  close(): Promise<void>;
}

const TRACES_PATH = "/v1/traces";

/** What a body of each content type is, and how it is decoded. */
const PROTOCOLS: { contentType: string; protocol: OtlpProtocol; decode: (body: Uint8Array) => SpanRecord[] }[] = [
  { contentType: "application/x-protobuf", protocol: "http/protobuf", decode: decodeProtobufExport },
  { contentType: "application/json", protocol: "http/json", decode: decodeJsonExport },
];

export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: SpanRecord[] = [];
  const requests: ExportRequestRecord[] = [];

  const receive = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    if (url.pathname !== TRACES_PATH) return void res.writeHead(404).end();
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const headers = flatHeaders(req.headers);
    const mediaType = (headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const known = PROTOCOLS.find((p) => p.contentType === mediaType);
    const record = (protocol: OtlpProtocol | null, received: SpanRecord[], error: string | null) =>
      requests.push({
        protocol,
        headers,
        spanCount: received.length,
        traceIds: [...new Set(received.map((span) => span.traceId))],
        error,
      });
    const raw = await readBody(req);
    if (!known) {
      record(null, [], `unsupported content type "${mediaType}"`);
      return void res.writeHead(415).end();
    }
    const encoding = (headers["content-encoding"] ?? "identity").toLowerCase();
    if (encoding !== "identity" && encoding !== "gzip") {
      record(known.protocol, [], `unsupported content encoding "${encoding}"`);
      return void res.writeHead(415).end();
    }
    let received: SpanRecord[];
    try {
      received = known.decode(encoding === "gzip" ? gunzipSync(raw) : raw);
    } catch (error) {
      // A collector answers a body it cannot read with 400, and the exporter gives up on it (no retry).
      const message = error instanceof Error ? error.message : String(error);
      record(known.protocol, [], message);
      return void res.writeHead(400, { "content-type": "text/plain" }).end(message);
    }
    spans.push(...received);
    record(known.protocol, received, null);
    if (known.protocol === "http/protobuf") {
      res.writeHead(200, {
        "content-type": "application/x-protobuf",
        "content-length": EMPTY_PROTOBUF_RESPONSE.byteLength,
      });
      return void res.end(EMPTY_PROTOBUF_RESPONSE);
    }
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  };

  const server = createServer((req, res) => {
    receive(req, res).catch((error: unknown) => {
      // Only reading the body can fail here (the client went away): nothing is recorded and nothing is left open.
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    spans: (filter = {}) => spans.filter((span) => filter.traceId === undefined || span.traceId === filter.traceId),
    requests,
    clear: () => {
      spans.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

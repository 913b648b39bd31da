// Vitest global setup (Node): starts the OTLP/HTTP receiver (otlp-receiver.ts) the Worker exports its traces to, and
// beside it a small control server through which tests in workerd read what arrived (spans.ts): the receiver's
// records live in this process, out of the runtime's reach. Also a loopback URL on which nothing listens, a
// collector that is down.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { freePort } from "../../bench/support/local-worker.ts";
import { type OtlpReceiver, startOtlpReceiver } from "./otlp-receiver.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT: exporters add /v1/traces). */
    otlpUrl: string;
    /** GET /spans?traceId=, GET /requests?traceId=, DELETE /spans. */
    otlpControlUrl: string;
    /** A loopback URL on which nothing listens. */
    otlpDownUrl: string;
  }
}

function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

/** The control server: what the receiver holds, as JSON, for a test that cannot reach it in memory. */
async function startControl(receiver: OtlpReceiver): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://control");
    const traceId = url.searchParams.get("traceId") ?? undefined;
    const route = `${req.method} ${url.pathname}`;
    if (route === "GET /spans") return sendJson(res, receiver.spans({ traceId }));
    if (route === "GET /requests") {
      const requests = receiver.requests.filter((r) => traceId === undefined || r.traceIds.includes(traceId));
      return sendJson(res, requests);
    }
    if (route === "DELETE /spans") {
      receiver.clear();
      return void res.writeHead(204).end();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const receiver = await startOtlpReceiver();
  const control = await startControl(receiver);
  // A port that was free a moment ago and is closed again: an export to it is refused at once, as when the collector
  // is down. (The OS hands out ephemeral ports in turn, so another server of the run is unlikely to take it soon.)
  const downPort = await freePort();
  project.provide("otlpUrl", receiver.url);
  project.provide("otlpControlUrl", `http://127.0.0.1:${(control.address() as AddressInfo).port}`);
  project.provide("otlpDownUrl", `http://127.0.0.1:${downPort}`);
  return async () => {
    control.closeAllConnections();
    await Promise.all([receiver.close(), new Promise((resolve) => control.close(resolve))]);
  };
}

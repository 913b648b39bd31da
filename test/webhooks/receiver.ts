// A webhook receiver in Node for the tests (started by ./global-setup.ts): POST /hooks/<name> records the delivery
// (its webhook-* headers and its body as sent) and answers 204, or 500 while `?fail=N` has failures left for that
// URL; GET /received/<name> answers what <name> received, oldest first, for the test to verify.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

export async function startWebhookReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const received = new Map<string, Received[]>();
  const failuresLeft = new Map<string, number>();
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://receiver");
    const [, kind = "", name = ""] = url.pathname.split("/");
    if (request.method === "GET" && kind === "received") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(received.get(name) ?? []));
      return;
    }
    if (request.method !== "POST" || kind !== "hooks") {
      response.writeHead(404).end();
      return;
    }
    const body = await readBody(request);
    const key = `${url.pathname}${url.search}`;
    if (!failuresLeft.has(key)) failuresLeft.set(key, Number(url.searchParams.get("fail") ?? "0"));
    const left = failuresLeft.get(key) ?? 0;
    const status = left > 0 ? 500 : 204;
    failuresLeft.set(key, left - 1);
    const headers = Object.fromEntries(
      Object.entries(request.headers)
        .filter(
          ([header]) =>
            header.startsWith("webhook-") || header === "content-type" || header === "x-a2a-notification-token",
        )
        .map(([header, value]) => [header, String(value)]),
    );
    received.set(name, [...(received.get(name) ?? []), { headers, body, status }]);
    response.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

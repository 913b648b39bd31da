// npm run webhooks:dev: a local webhook receiver for `npm start`, with nothing to install: it listens on
// http://127.0.0.1:8789 (PORT=... for another), prints each delivery aptix sends (its type, webhook-id and data) and
// verifies its signature with the official `standardwebhooks` library, as a receiver in production would. Give it the
// secret aptix answered when the endpoint was created (WEBHOOK_SECRET=whsec_...); without one, deliveries are printed
// as unverified. A delivery whose signature does not verify is answered 401 (aptix then retries it).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

const port = Number(process.env.PORT ?? 8789);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, not ${process.env.PORT}`);
  process.exit(1);
}
const secret = process.env.WEBHOOK_SECRET?.trim() || null;
let webhook: Webhook | null = null;
try {
  webhook = secret ? new Webhook(secret) : null;
} catch {
  console.error("WEBHOOK_SECRET must be the secret aptix answered when the endpoint was created (whsec_...).");
  process.exit(1);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** The webhook-* headers as the library wants them (one string each). */
function webhookHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const value = request.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  return headers;
}

const server = createServer(async (request, response) => {
  if (request.method !== "POST") {
    response.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const body = await readBody(request);
  const headers = webhookHeaders(request);
  const id = headers["webhook-id"] ?? "(no webhook-id)";
  let event: { type?: unknown; data?: unknown } = {};
  let verdict: string;
  let status = 204;
  if (webhook) {
    try {
      event = webhook.verify(body, headers) as typeof event;
      verdict = "verified";
    } catch (error) {
      verdict = `NOT VERIFIED (${error instanceof Error ? error.message : String(error)})`;
      status = 401;
    }
  } else {
    verdict = "unverified (set WEBHOOK_SECRET to verify)";
    try {
      event = JSON.parse(body) as typeof event;
    } catch {
      event = {};
    }
  }
  console.log(`${new Date().toISOString()} ${String(event.type ?? "?")} ${id} ${verdict}`);
  if (event.data !== undefined) console.log(`  ${JSON.stringify(event.data)}`);
  response.writeHead(status).end();
});

server.once("error", (error: NodeJS.ErrnoException) => {
  console.error(error.code === "EADDRINUSE" ? `Port ${port} is taken: stop what serves it, or set PORT.` : error);
  process.exit(1);
});
server.listen(port, "127.0.0.1", () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  console.log(
    `Webhook receiver at ${url} (Ctrl-C stops it). Subscribe it (npm start sets WEBHOOK_ALLOW_HTTP_LOOPBACK):\n`,
  );
  console.log(
    `  curl -s \${APTIX_URL:-http://localhost:8787}/context/webhooks -H "authorization: Bearer \${APTIX_KEY:-dev-key}" \\\n` +
      `    -H 'content-type: application/json' \\\n` +
      `    -d '{"url": "${url}", "events": ["turn.completed", "turn.failed", "turn.paused", "schedule.failed"]}'\n`,
  );
  console.log(webhook ? "Verifying signatures with WEBHOOK_SECRET.\n" : "No WEBHOOK_SECRET: printing unverified.\n");
});

// npm run bench:webhooks — how soon a turn's end reaches a webhook endpoint. One Worker under `wrangler dev` (as npm
// start runs it: the offline demo model, a real local queue) and a receiver in this process subscribed to
// `turn.completed`. Each round, 20 sessions at once each send one message; per turn, measured in the same run:
//   - delivery delay: from the turn's answer arriving at its client to its `turn.completed` delivery arriving at the
//     receiver (publishEvent in the object's waitUntil -> the queue -> the consumer's D1 read -> the signed POST);
//   - baseline: the turn's own duration as its client saw it (send to answer), under the same load.
// Reported: median and p95 of each, and the delay's median as a ratio of the turn's.

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile, ratio } from "./support/stats.ts";

const KEY = "dev-key";
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

async function api<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** A receiver that verifies each delivery and notes when each session's turn.completed arrived. */
async function startReceiver() {
  let verifier: Webhook | null = null;
  const arrived = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  let refused = 0;
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const at = performance.now();
    try {
      const event = verifier?.verify(body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }) as { type: string; data: { sessionId: string } };
      if (event.type === "turn.completed") {
        arrived.set(event.data.sessionId, at);
        waiting.get(event.data.sessionId)?.();
      }
      response.writeHead(204).end();
    } catch {
      refused++;
      response.writeHead(401).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    verifyWith: (secret: string) => {
      verifier = new Webhook(secret);
    },
    refused: () => refused,
    /** When `sessionId`'s turn.completed arrived (waits for it, 60 s at most). */
    arrival: (sessionId: string) =>
      new Promise<number>((resolve, reject) => {
        const known = arrived.get(sessionId);
        if (known !== undefined) return resolve(known);
        const timer = setTimeout(() => reject(new Error(`no turn.completed for ${sessionId} within 60 s`)), 60_000);
        waiting.set(sessionId, () => {
          clearTimeout(timer);
          resolve(arrived.get(sessionId) ?? Number.NaN);
        });
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One turn of a fresh session: when it was sent and when its answer arrived. */
async function turn(url: string, sessionId: string): Promise<{ sent: number; answered: number }> {
  const sent = performance.now();
  await api(url, "POST", `/context/sessions/${sessionId}/messages`, { content: "hello" });
  return { sent, answered: performance.now() };
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-webhooks-"));
  const receiver = await startReceiver();
  let worker: LocalWorker | undefined;
  try {
    worker = await startLocalWorker({ config: await benchConfig(tmp, true) });
    const url = worker.url;
    const { secret } = await api<{ secret: string }>(url, "POST", "/context/webhooks", {
      url: receiver.url,
      events: ["turn.completed"],
      description: "bench:webhooks",
    });
    receiver.verifyWith(secret);
    // Warm-up: the first turn compiles and wakes what every later one reuses.
    const warm = (await api<{ sessionId: string }>(url, "POST", "/context/sessions", {})).sessionId;
    await turn(url, warm);
    await receiver.arrival(warm);

    const delays: number[] = [];
    const turns: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const sessions = await Promise.all(
        Array.from({ length: SESSIONS }, () =>
          api<{ sessionId: string }>(url, "POST", "/context/sessions", {}).then((s) => s.sessionId),
        ),
      );
      const timed = await Promise.all(sessions.map((id) => turn(url, id)));
      const arrivals = await Promise.all(sessions.map((id) => receiver.arrival(id)));
      timed.forEach(({ sent, answered }, i) => {
        turns.push(answered - sent);
        delays.push((arrivals[i] ?? Number.NaN) - answered);
      });
      console.error(`round ${round + 1}/${ROUNDS}: ${SESSIONS} turns, ${SESSIONS} deliveries`);
    }
    const median = (values: number[]) => percentile(values, 50);
    console.log("");
    console.log(`${SESSIONS} sessions at once, ${ROUNDS} rounds (${delays.length} turns), wrangler dev, demo model`);
    console.log("");
    console.log("| measure (ms) | median | p95 |");
    console.log("| --- | --- | --- |");
    console.log(
      `| turn: message sent to answer (baseline) | ${fixed(median(turns), 1)} | ${fixed(percentile(turns, 95), 1)} |`,
    );
    console.log(
      `| delivery: answer to turn.completed at the receiver | ${fixed(median(delays), 1)} | ${fixed(percentile(delays, 95), 1)} |`,
    );
    console.log("");
    console.log(`delivery delay / turn duration (medians): ${ratio(median(delays), median(turns))}`);
    console.log(`deliveries refused by the receiver's signature check: ${receiver.refused()}`);
  } finally {
    await worker?.stop();
    await receiver.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();

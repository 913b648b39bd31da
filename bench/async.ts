// npm run bench:async — what `Prefer: respond-async` costs and saves. One Worker under `wrangler dev` (as npm start
// runs it) with the offline demo model. Per round, each in a fresh session (made outside the timing), taking turns:
//   - sync: POST /context/sessions/:id/messages until the finished turn's answer (the demo model streams its answer
//     a piece at a time, as a model does);
//   - async: the same message with `Prefer: respond-async`, until the 202 (the turn admitted and stored); the turn
//     is then polled (every 10 ms) to its end before the next round, so no round runs beside another's turn.
// Reported: the median and p95 of each, and async / sync (the share of the synchronous wait the caller no longer
// spends). `wrangler dev` is slow per request, so the ratio is the figure that matters.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile, ratio, table } from "./support/stats.ts";

/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const WARMUP = 5;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const MESSAGE = "say hello to Dana";
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

async function post(url: string, path: string, body: unknown, extra: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}${path}`, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
}

async function newSession(url: string): Promise<string> {
  const response = await post(url, "/context/sessions", {});
  if (response.status !== 201) throw new Error(`POST /context/sessions answered ${response.status}`);
  return ((await response.json()) as { sessionId: string }).sessionId;
}

/** ms until the synchronous turn's answer; its status must be completed. */
async function syncTurn(url: string): Promise<number> {
  const id = await newSession(url);
  const start = performance.now();
  const response = await post(url, `/context/sessions/${id}/messages`, { content: MESSAGE });
  const answer = (await response.json()) as { status: string };
  const ms = performance.now() - start;
  if (response.status !== 200 || answer.status !== "completed") throw new Error(`sync turn: ${JSON.stringify(answer)}`);
  return ms;
}

/** ms until the 202, and ms from it until a poll finds the turn completed. */
async function asyncTurn(url: string): Promise<{ accepted: number; done: number }> {
  const id = await newSession(url);
  const start = performance.now();
  const response = await post(
    url,
    `/context/sessions/${id}/messages`,
    { content: MESSAGE },
    { prefer: "respond-async" },
  );
  await response.arrayBuffer();
  const accepted = performance.now() - start;
  const location = response.headers.get("location");
  if (response.status !== 202 || !location) throw new Error(`async turn answered ${response.status}`);
  for (;;) {
    const turn = (await (await fetch(`${url}${location}`, { headers })).json()) as { status: string };
    if (turn.status === "completed") return { accepted, done: performance.now() - start };
    if (turn.status !== "running") throw new Error(`async turn ended ${turn.status}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-async-"));
  let worker: LocalWorker | undefined;
  const stop = async () => {
    await worker?.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stop().then(() => process.exit(130));
  });
  try {
    worker = await startLocalWorker({ config: await benchConfig(tmp, true) });
    const { url } = worker;
    console.log(`Worker at ${url} (wrangler dev, offline demo model); ${WARMUP} warm-up rounds, ${SAMPLES} measured.`);
    const sync: number[] = [];
    const accepted: number[] = [];
    const done: number[] = [];
    for (let round = 0; round < WARMUP + SAMPLES; round++) {
      // Alternate which goes first, so neither always follows the other's turn.
      const pair =
        round % 2 === 0
          ? [await syncTurn(url), await asyncTurn(url)]
          : await asyncTurn(url).then(async (a) => [await syncTurn(url), a] as const);
      if (round < WARMUP) continue;
      const [s, a] = pair as [number, { accepted: number; done: number }];
      sync.push(s);
      accepted.push(a.accepted);
      done.push(a.done);
    }
    const p50 = (v: number[]) => percentile(v, 50);
    const p95 = (v: number[]) => percentile(v, 95);
    console.log("");
    console.log(
      table(
        ["measure (ms)", "median", "p95", "median / sync"],
        [
          ["sync: POST .../messages until the answer", fixed(p50(sync)), fixed(p95(sync)), "1.00x"],
          [
            "async: the same with Prefer: respond-async, until the 202",
            fixed(p50(accepted)),
            fixed(p95(accepted)),
            ratio(p50(accepted), p50(sync)),
          ],
          [
            "async: until a poll (every 10 ms) finds it completed",
            fixed(p50(done)),
            fixed(p95(done)),
            ratio(p50(done), p50(sync)),
          ],
        ],
      ),
    );
  } finally {
    await stop();
  }
}

await main();

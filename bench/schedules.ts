// npm run bench:schedules — 1,000 schedules due in the same minute. One Worker under `wrangler dev` (as npm start runs
// it) with the offline demo model. First one schedule alone (the baseline), due at a minute's start; then 1,000
// created through the API concurrently (BENCH_CONCURRENCY at a time, the same `at`: a minute's start far enough
// ahead that they are all made before it), each its own ScheduleRunner whose alarm starts a turn in a new session.
// Each run's record says when its turn started (`at`, once the session object admitted and stored it) and when it
// was due: the delay is the difference. Reported: the delays' median, p95 and max; how many started within the
// minute they were due in; each as a ratio of the lone schedule's delay, measured in the same run. Then the same
// work sent by clients at one instant, for comparison: COUNT new sessions each given a message with
// `Prefer: respond-async` (answered 202 once the turn is admitted and stored), timed from the burst's start.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

const COUNT = Number(process.env.BENCH_SCHEDULES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const headers = { authorization: "Bearer dev-key", "content-type": "application/json" };

interface LastRun {
  at: string;
  status: string;
  reason: string | null;
}
interface Schedule {
  scheduleId: string;
  name: string;
  lastRun: LastRun | null;
}

async function api<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** The first start of a minute at least `aheadMs` from now. */
const minuteAfter = (aheadMs: number) => Math.ceil((Date.now() + aheadMs) / 60_000) * 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads the schedules named `prefix…` until each has a last run (or `deadline`); their last runs. */
async function lastRuns(url: string, prefix: string, count: number, deadline: number): Promise<LastRun[]> {
  for (;;) {
    const { schedules } = await api<{ schedules: Schedule[] }>(url, "GET", "/context/schedules");
    const mine = schedules.filter((s) => s.name.startsWith(prefix));
    const runs = mine.flatMap((s) => (s.lastRun ? [s.lastRun] : []));
    if (runs.length >= count || Date.now() > deadline) return runs;
    await sleep(2_000);
  }
}

/** `count` schedules named `prefix<i>`, due at `dueAt`, made `CONCURRENCY` at a time; how long it took (ms). */
async function createSchedules(url: string, prefix: string, count: number, dueAt: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await api(url, "POST", "/context/schedules", {
        name: `${prefix}${i}`,
        prompt: "hello",
        at: new Date(dueAt).toISOString(),
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
  return performance.now() - started;
}

function delaysOf(runs: LastRun[], dueAt: number): number[] {
  return runs.map((run) => Date.parse(run.at) - dueAt);
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-schedules-"));
  let worker: LocalWorker | undefined;
  const stop = async () => {
    await worker?.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stop().then(() => process.exit(130));
  });
  try {
    const config = await benchConfig(tmp, true);
    const cap = String(COUNT * 2 + 10);
    console.log("Starting the Worker (wrangler dev, the offline demo model) ...");
    worker = await startLocalWorker({ config, vars: { SCHEDULES_MAX_PER_USER: cap, SCHEDULES_MAX_PER_ORG: cap } });
    const url = worker.url;
    // A warm-up turn: the Worker's first compile and the first objects are not the baseline's.
    const { sessionId } = await api<{ sessionId: string }>(url, "POST", "/context/sessions", {});
    await api(url, "POST", `/context/sessions/${sessionId}/messages`, { content: "hello" });

    const aloneDue = minuteAfter(5_000);
    await createSchedules(url, "alone-", 1, aloneDue);
    console.log(`One schedule alone, due ${new Date(aloneDue).toISOString()} ...`);
    await sleep(aloneDue - Date.now());
    const [alone] = await lastRuns(url, "alone-", 1, aloneDue + 120_000);
    if (!alone) throw new Error("the lone schedule did not run within two minutes");
    const baseline = Date.parse(alone.at) - aloneDue;

    // Far enough ahead for them all to be made first (the API makes some 15 a second here), at a minute's start.
    const due = minuteAfter(20_000 + COUNT * 90);
    console.log(`Creating ${COUNT} schedules due ${new Date(due).toISOString()}, ${CONCURRENCY} at a time ...`);
    const creationMs = await createSchedules(url, "load-", COUNT, due);
    console.log(`  made in ${fixed(creationMs / 1000, 1)} s (${fixed(COUNT / (creationMs / 1000), 0)} a second)`);
    if (Date.now() >= due) throw new Error("the schedules were not all made before they were due: raise the lead");
    await sleep(due - Date.now() + 60_000);
    const runs = await lastRuns(url, "load-", COUNT, due + 240_000);
    const delays = delaysOf(runs, due);
    const within = delays.filter((d) => d < 60_000).length;
    const failed = runs.filter((r) => r.status === "failed" || r.status === "skipped");
    const p50 = percentile(delays, 50);
    const p95 = percentile(delays, 95);
    const max = Math.max(...delays);
    console.log("");
    console.log("| measure | ms after due | ÷ one alone |");
    console.log("| --- | ---: | ---: |");
    console.log(`| one schedule alone (baseline) | ${fixed(baseline, 0)} | 1.00x |`);
    console.log(`| ${COUNT} due together: median | ${fixed(p50, 0)} | ${fixed(p50 / baseline)}x |`);
    console.log(`| ${COUNT} due together: p95 | ${fixed(p95, 0)} | ${fixed(p95 / baseline)}x |`);
    console.log(`| ${COUNT} due together: max (the last to start) | ${fixed(max, 0)} | ${fixed(max / baseline)}x |`);
    console.log("");
    console.log(
      `${runs.length} of ${COUNT} ran; ${within} started within the minute they were due in (goal: all); ` +
        `${failed.length} failed or skipped${failed[0] ? ` (first reason: ${failed[0].reason})` : ""}.`,
    );
    // The same turns started by clients at one instant: a new session and a message answered 202 each.
    await sleep(20_000);
    const burst = performance.now();
    const clients = await Promise.all(
      Array.from({ length: COUNT }, async () => {
        const { sessionId } = await api<{ sessionId: string }>(url, "POST", "/context/sessions", {});
        const response = await fetch(`${url}/context/sessions/${sessionId}/messages`, {
          method: "POST",
          headers: { ...headers, prefer: "respond-async" },
          body: JSON.stringify({ content: "hello" }),
        });
        await response.arrayBuffer();
        if (response.status !== 202) throw new Error(`a client's message answered ${response.status}`);
        return performance.now() - burst;
      }),
    );
    const c50 = percentile(clients, 50);
    const cMax = Math.max(...clients);
    console.log("");
    console.log(`| the same ${COUNT} turns sent by clients at once | ms after the burst | schedules ÷ clients |`);
    console.log("| --- | ---: | ---: |");
    console.log(`| median 202 | ${fixed(c50, 0)} | ${fixed(p50 / c50)}x |`);
    console.log(`| last 202 | ${fixed(cMax, 0)} | ${fixed(max / cMax)}x |`);
  } finally {
    await stop();
  }
}

await main();

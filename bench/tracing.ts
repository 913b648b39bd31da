// Benchmark of tracing (issue 29): what exporting every request's spans to an OTLP collector costs a reply.
// Two Workers, copies of ours, in front of the same scripted upstream (neither with wrangler's local trace
// collector): one with tracing off (no endpoint), one exporting OTLP/HTTP protobuf to a real receiver on loopback
// (test/observability/otlp-receiver.ts, in a process of its own: bench/support/otlp-collector.ts). Two requests on
// each: a passthrough chat completion through /v1, and an agent turn through /agent/v1/chat/completions continuing
// its session (X-Aptix-Session; a new session every MESSAGES_PER_SESSION messages). One request at a time, the four
// ways taking turns, so all see the same load.
// Both Workers run in ONE `wrangler dev` (one workerd process, an isolate each, as Workers share a process in
// production), behind a front Worker that hands each request to the one it names (bench/tracing-pair-router.ts);
// which of the two is traced alternates from block to block. BENCH_PROCESSES=two runs each Worker in a `wrangler
// dev` of its own instead (the method before: two processes differ by up to 3% on their own, where each lands on
// the two cores).
// The run is split into BENCH_BLOCKS blocks (8 by default), each with fresh processes; the samples of all blocks
// are pooled, and each block's own ratio is printed. A median of n requests whose times spread as these do (p10 to
// p90: 11 to 22 ms) is known to about 1.25 sigma / sqrt(n): with 600 requests a way, a ratio of two medians is
// known to about 2%, as much as the cost measured; with BENCH_SAMPLES' default of 4,000, to about 0.7%.
// BENCH_AA=1 runs the same with the "traced" Worker untraced too: the noise floor, for comparison.
// Goal: the traced passthrough within 1.03x and the traced turn within 1.05x of the untraced (medians).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig, pairConfigs } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile, table } from "./support/stats.ts";

/** seeds/local.sql's key (chat and admin), which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const WARMUP = 30;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 4_000);
const MESSAGES_PER_SESSION = 10;
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8);
/** Both Workers untraced: the spread of the method itself. */
const AA = process.env.BENCH_AA === "1";
/** Both Workers in one `wrangler dev` (the default), or each in its own. */
const PROCESSES = process.env.BENCH_PROCESSES === "two" ? "two" : "one";
const GOALS = { passthrough: 1.03, turn: 1.05 } as const;

interface Way {
  name: string;
  kind: keyof typeof GOALS;
  traced: boolean;
  url: string;
  /** The front Worker's `x-bench-worker`: which of the pair serves this way in the current block (one process). */
  worker: "a" | "b";
  session: string | null;
  ms: number[];
  /** Each block's median ÷ the untraced way's in the same block. */
  blockRatios: number[];
}

const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

async function timeRequest(way: Way, i: number, content: string): Promise<void> {
  if (i % MESSAGES_PER_SESSION === 0) way.session = null;
  const passthrough = way.kind === "passthrough";
  const sent = { ...headers, "x-bench-worker": way.worker, ...(way.session ? { "x-aptix-session": way.session } : {}) };
  const started = performance.now();
  const response = await fetch(`${way.url}${passthrough ? "/v1/chat/completions" : "/agent/v1/chat/completions"}`, {
    method: "POST",
    headers: sent,
    body: JSON.stringify({
      model: passthrough ? "bench-model" : "aptix-agent/general",
      messages: [{ role: "user", content: `${content} (${i})` }],
    }),
  });
  const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
  const elapsed = performance.now() - started;
  if (response.status !== 200 || body.choices?.[0]?.message?.content !== "pong") {
    throw new Error(`${way.name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  if (!passthrough) way.session = response.headers.get("x-aptix-session");
  way.ms.push(elapsed);
}

/** The collector in its own process: its OTLP base URL, and a URL that says what it got (`/clear` forgets it). */
async function startCollector(): Promise<{ url: string; stats: string; stop(): void }> {
  const child = spawn(process.execPath, ["bench/support/otlp-collector.ts"], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(child.stdout, "data")) as [Buffer];
  const { url, stats } = JSON.parse(line.toString()) as { url: string; stats: string };
  return { url, stats, stop: () => child.kill() };
}

async function collected(stats: string, path = ""): Promise<{ spans: number; traces: number }> {
  return (await (await fetch(`${stats}${path}`)).json()) as { spans: number; traces: number };
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-tracing-"));
  const upstream = await startScriptedUpstream();
  const receiver = await startCollector();
  const workers: LocalWorker[] = [];
  const stopAll = async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await upstream.close();
    receiver.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    const vars = { LLM_BASE_URL: `${upstream.url}/v1` };
    const tracedVars = AA ? vars : { ...vars, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    const script = upstream.createScript([{ type: "completion", content: "pong" }], { repeat: true, record: false });
    const content = `ping ${script.marker}`;
    const way = (name: string, kind: Way["kind"], traced: boolean): Way => ({
      name,
      kind,
      traced,
      url: "",
      worker: "a",
      session: null,
      ms: [],
      blockRatios: [],
    });
    const ways: Way[] = [
      way("passthrough, tracing off", "passthrough", false),
      way(`passthrough, ${AA ? "untraced (A/A)" : "traced"}`, "passthrough", true),
      way("agent turn, tracing off", "turn", false),
      way(`agent turn, ${AA ? "untraced (A/A)" : "traced"}`, "turn", true),
    ];
    const baseline = (w: Way) => ways.find((b) => b.kind === w.kind && !b.traced) as Way;
    const perBlock = Math.ceil(SAMPLES / BLOCKS);
    const received = { spans: 0, traces: 0 };
    for (let block = 0; block < BLOCKS; block++) {
      console.log(`Block ${block + 1} of ${BLOCKS}: fresh Workers (wrangler dev, no local trace collector) ...`);
      if (PROCESSES === "one") {
        // Which of the pair is traced alternates: the two isolates of one process are not quite alike either.
        const tracedIs = block % 2 === 0 ? "b" : "a";
        const pair = await pairConfigs(tmp, tracedIs === "b" ? { a: vars, b: tracedVars } : { a: tracedVars, b: vars });
        const both = await startLocalWorker({
          config: pair.router,
          auxiliary: pair.workers,
          localObservability: false,
        });
        workers.push(both);
        for (const w of ways) {
          w.url = both.url;
          w.worker = w.traced === (tracedIs === "b") ? "b" : "a";
        }
      } else {
        const config = await benchConfig(tmp, true);
        const start = (traced: boolean) =>
          startLocalWorker({ config, vars: traced ? tracedVars : vars, localObservability: false });
        // The start order alternates: the first process started is not always the same one. (Not together: a run
        // that started both at once got a Worker answering without its --var LLM_BASE_URL.)
        const first = await start(block % 2 === 1);
        workers.push(first);
        const second = await start(block % 2 === 0);
        workers.push(second);
        const [off, on] = block % 2 === 1 ? [second, first] : [first, second];
        for (const w of ways) w.url = w.traced ? on.url : off.url;
      }
      for (const w of ways) w.session = null;
      const kept = ways.map((w) => w.ms);
      for (const w of ways) w.ms = [];
      for (let i = 0; i < WARMUP; i++) for (const w of ways) await timeRequest(w, i, content);
      ways.forEach((w, k) => {
        w.ms = kept[k] as number[];
      });
      await collected(receiver.stats, "/clear");
      const from = ways.map((w) => w.ms.length);
      const rounds = Math.min(perBlock, SAMPLES - block * perBlock);
      for (let i = 0; i < rounds; i++) {
        for (let k = 0; k < ways.length; k++) await timeRequest(ways[(k + i) % ways.length] as Way, i, content);
      }
      const blockMedian = (w: Way) => percentile(w.ms.slice(from[ways.indexOf(w)]), 50);
      for (const w of ways) {
        if (w.traced) w.blockRatios.push(blockMedian(w) / blockMedian(baseline(w)));
      }
      console.log(`  medians (ms): ${ways.map((w) => `${w.name} ${fixed(blockMedian(w))}`).join("; ")}`);
      // The last exports leave after their replies: a moment for them to land before the processes stop.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const got = await collected(receiver.stats);
      received.spans += got.spans;
      received.traces += got.traces;
      await Promise.all(workers.splice(0).map((w) => w.stop()));
    }
    const got = received;
    const median = (w: Way) => percentile(w.ms, 50);
    const ratio = (w: Way) => median(w) / median(baseline(w));
    const rows = ways.map((w) => [
      w.name,
      fixed(percentile(w.ms, 10)),
      fixed(median(w)),
      fixed(percentile(w.ms, 90)),
      fixed(percentile(w.ms, 99)),
      `${fixed(ratio(w))}x`,
    ]);
    const goals = ways
      .filter((w) => w.traced)
      .map(
        (w) =>
          `goal: ${w.name} within ${GOALS[w.kind]}x of tracing off (median): ${ratio(w) <= GOALS[w.kind] ? "met" : "MISSED"} (${fixed(ratio(w))}x)`,
      );
    console.log(
      [
        "",
        `Tracing benchmark (wrangler dev, ${PROCESSES === "one" ? "both Workers in one process" : "a process each"}, ${new Date().toISOString().slice(0, 10)}): a non-streamed passthrough chat`,
        `completion and an agent turn, ${SAMPLES} requests per way in ${BLOCKS} blocks of fresh Workers (${WARMUP}`,
        "warm-up each), one at a time, all ways taking turns; the traced Worker exports OTLP/HTTP protobuf to a",
        `receiver on loopback after each reply.${AA ? " A/A RUN: both Workers untraced." : ""}`,
        "",
        table(["ms per request", "p10", "median", "p90", "p99", "/ tracing off"], rows),
        "",
        ...goals,
        ...ways
          .filter((w) => w.traced)
          .map((w) => `${w.name}, each block's own ratio: ${w.blockRatios.map((r) => fixed(r)).join(", ")}`),
        `the collector got ${got.spans} spans of ${got.traces} traces (${fixed(got.spans / (2 * SAMPLES))} a traced request)`,
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

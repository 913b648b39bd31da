// Benchmark of the OpenAI-compatible passthrough against a minimal forwarding Worker, each under
// `wrangler dev` in front of the same scripted upstream: throughput, latency and CPU of non-streamed
// completions, and how long the first SSE byte takes from the upstream to the client. `wrangler dev`
// is slow per request, so the figures that matter are the ratios to the minimal worker in the same run.
// A third worker, ours without the rate limiter binding and the static assets, shows how much of the
// difference is wrangler dev's local simulators of those two (a Durable Object with SQLite behind every
// limit() call, a router Worker in front of every request) rather than the passthrough's own code. A fourth,
// the minimal forwarder WITH those two bindings (bench/minimal-forwarder-bound.ts: the same ./public assets
// with the Worker first on /v1/*, and a rate limiting binding whose limit() it calls once a request), is the
// baseline that pays the same simulators: "ours / minimal with the same bindings" is the passthrough's own
// cost under wrangler dev. A fifth, optional: Portkey's AI gateway built for Workers, from a checkout named by
// PORTKEY_GATEWAY_DIR (bench/support/portkey-gateway.ts), forwarding to the same upstream as an OpenAI custom host.
// BENCH_SLICES, BENCH_SLICE_REQUESTS, BENCH_WARMUP, BENCH_SEQUENTIAL and BENCH_STREAMS make a smoke run short.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig, snapshotAssetsConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import {
  PORTKEY_GATEWAY_DIR_VAR,
  PORTKEY_HOW_TO,
  portkeyCheckout,
  portkeyHeaders,
  startPortkeyGateway,
} from "./support/portkey-gateway.ts";
import { sseData } from "./support/sse-data.ts";

const UPSTREAM_KEY = "sk-bench-upstream";
/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const CLIENT_KEY = "dev-key";
const CONCURRENCY = 8;

/** A whole number of at least 1 from the environment variable `name`, or `fallback` when it is not set. */
function countFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1: ${raw}`);
  return value;
}

const WARMUP_REQUESTS = countFromEnv("BENCH_WARMUP", 300);
/** Requests per worker, run in slices that rotate the workers' order so all see the same background load. */
const SLICES = countFromEnv("BENCH_SLICES", 30);
const REQUESTS_PER_SLICE = countFromEnv("BENCH_SLICE_REQUESTS", 100);
const STREAMS = countFromEnv("BENCH_STREAMS", 150);
/** Streams per worker before the measured ones. */
const STREAM_WARMUP = 20;
/** Unloaded latency: requests per worker one at a time, the workers taking turns. */
const SEQUENTIAL_REQUESTS = countFromEnv("BENCH_SEQUENTIAL", 300);
/** What the scripted upstream answers: the non-streamed completion's text, and the streamed one's. */
const PLAIN_CONTENT = "Hello from the benchmark upstream.";
const STREAM_CONTENT = "Streaming from the benchmark upstream, chunk by chunk.";
/** Linux's USER_HZ, the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = 100;

/** A wall clock with sub-millisecond resolution, the same one the scripted upstream stamps with. */
const now = () => performance.timeOrigin + performance.now();

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/**
 * CPU seconds used so far by the processes of the `wrangler dev` that serves `url` (wrangler, workerd
 * and its local simulators of D1 and the rate limiter), read from /proc; null where there is no /proc.
 */
async function cpuSeconds(url: string): Promise<number | null> {
  const port = new URL(url).port;
  let pids: string[];
  try {
    pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const stats = await Promise.all(
    pids.map(async (pid) => {
      try {
        const [cmdline, stat] = await Promise.all([
          readFile(`/proc/${pid}/cmdline`, "utf8"),
          readFile(`/proc/${pid}/stat`, "utf8"),
        ]);
        // After the command name: state ppid pgrp ..., utime and stime are fields 14 and 15 of the line.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return { cmdline, pgrp: fields[2], ticks: Number(fields[11]) + Number(fields[12]) };
      } catch {
        return null; // The process ended meanwhile.
      }
    }),
  );
  const leader = stats.find((s) => s?.cmdline.includes(`--port\0${port}\0`));
  if (!leader) return null;
  const ticks = stats.reduce((sum, s) => (s && s.pgrp === leader.pgrp ? sum + s.ticks : sum), 0);
  return ticks / CLOCK_TICKS_PER_SECOND;
}

interface LoadResult {
  latencies: number[];
  seconds: number;
}

/** `total` requests, `CONCURRENCY` at a time; every answer must be a 200. */
async function load({ url, headers }: Target, body: string, total: number): Promise<LoadResult> {
  let issued = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const lane = async () => {
    while (issued < total) {
      issued++;
      const t0 = performance.now();
      const response = await fetch(url, { method: "POST", headers, body });
      const text = await response.text();
      latencies.push(performance.now() - t0);
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

/** The client's clock when the first byte of each stream's body arrived, one stream at a time. */
async function firstBytes({ url, headers }: Target, body: string, count: number): Promise<number[]> {
  const stamps: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(url, { method: "POST", headers, body });
    const reader = response.body?.getReader();
    if (!reader || response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    const first = await reader.read();
    stamps.push(now());
    if (first.done) throw new Error(`${url} sent an empty stream`);
    while (!(await reader.read()).done) {
      // Drain the rest of the stream.
    }
  }
  return stamps;
}

/**
 * Fails unless `target` answers `body` with the upstream's completion, `content`: the message of its JSON answer, or
 * the deltas of its stream put together. Once a worker and a way, before the measured requests.
 */
async function checkAnswer(target: Target, body: string, content: string, stream: boolean): Promise<void> {
  const response = await fetch(target.url, { method: "POST", headers: target.headers, body });
  if (response.status !== 200 || !response.body) {
    throw new Error(`${target.name} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  let answered = "";
  if (stream) {
    for await (const data of sseData(response.body)) {
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string | null } }[] };
      answered += chunk.choices?.[0]?.delta?.content ?? "";
    }
  } else {
    const json = (await response.json()) as { choices?: { message?: { content?: unknown } }[] };
    answered = String(json.choices?.[0]?.message?.content);
  }
  if (answered !== content) {
    throw new Error(
      `${target.name} answered ${JSON.stringify(answered)}, not the upstream's ${JSON.stringify(content)}`,
    );
  }
}

interface Target {
  name: string;
  url: string;
  /** The request headers this worker is called with: our client key, or Portkey's routing headers. */
  headers: Record<string, string>;
  latencies: number[];
  seconds: number;
  requests: number;
  cpu: number | null;
  firstByteGaps: number[];
  sequential: number[];
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const row = (name: string, cells: string[]) => `${name.padEnd(48)}${cells.map((c) => c.padStart(12)).join("")}`;

const MINIMAL = "minimal forwarder";
const OURS = "aptix passthrough";
const OURS_BARE = "aptix passthrough, no simulators";
const MINIMAL_BOUND = "minimal forwarder, same bindings";
const PORTKEY = "Portkey gateway";

function stats(t: Target) {
  return {
    rps: t.requests / t.seconds,
    median: percentile(t.latencies, 50),
    p99: percentile(t.latencies, 99),
    cpu: t.cpu === null ? Number.NaN : (1000 * t.cpu) / t.requests,
    first: percentile(t.firstByteGaps, 50),
    seqMedian: percentile(t.sequential, 50),
    seqP99: percentile(t.sequential, 99),
    firstP99: percentile(t.firstByteGaps, 99),
  };
}

/** `t` against `base` under load: ratios, then differences in ms. */
function loadedComparison(label: string, t: Target, base: Target): string[] {
  const s = stats(t);
  const b = stats(base);
  return [
    row(`  ratio ${label}`, [fmt(s.rps / b.rps), fmt(s.median / b.median), fmt(s.p99 / b.p99), fmt(s.cpu / b.cpu)]),
    row("  difference (ms)", ["", fmt(s.median - b.median), fmt(s.p99 - b.p99), fmt(s.cpu - b.cpu)]),
  ];
}

function unloadedComparison(label: string, t: Target, base: Target): string {
  const s = stats(t);
  const b = stats(base);
  return row(`  difference ${label}`, [fmt(s.seqMedian - b.seqMedian), fmt(s.seqP99 - b.seqP99)]);
}

/**
 * Each of ours (and the minimal forwarder) ÷ Portkey's gateway: throughput under load, the median one at a time, the
 * median first streamed byte, CPU ms a request; then ours − Portkey in ms. Portkey runs without bindings, so "ours,
 * no simulators" is the like-for-like row.
 */
function portkeyComparison(ours: Target, others: Target[], portkey: Target, version: string): string[] {
  const p = stats(portkey);
  const s = stats(ours);
  const ratios = (t: Target) => {
    const st = stats(t);
    return row(`  ${t.name}`, [
      fmt(st.rps / p.rps),
      fmt(st.seqMedian / p.seqMedian),
      fmt(st.first / p.first),
      fmt(st.cpu / p.cpu),
    ]);
  };
  return [
    `Beside Portkey's gateway ${version} (its own wrangler.toml, no bindings: "ours, no simulators" is like for like):`,
    row("ratio to Portkey", ["req/s", "1 at a time", "first byte", "CPU ms/req"]),
    ...[ours, ...others].map(ratios),
    row(`  difference ${OURS} - Portkey (ms)`, [
      "",
      fmt(s.seqMedian - p.seqMedian),
      fmt(s.first - p.first),
      fmt(s.cpu - p.cpu),
    ]),
  ];
}

function report(targets: Target[], portkeyVersion: string | null): string {
  const byName = (name: string) => {
    const target = targets.find((t) => t.name === name);
    if (!target) throw new Error(`no target ${name}`);
    return target;
  };
  const base = byName(MINIMAL);
  const ours = byName(OURS);
  const bare = byName(OURS_BARE);
  const bound = byName(MINIMAL_BOUND);
  const portkey = targets.find((t) => t.name === PORTKEY);
  const b = stats(base);
  const s = stats(ours);
  const sb = stats(bound);
  return [
    "Passthrough benchmark: each worker under wrangler dev on this machine, in front of the same scripted upstream.",
    `Non-streamed: ${SLICES * REQUESTS_PER_SLICE} completions per worker at concurrency ${CONCURRENCY} after ${WARMUP_REQUESTS} warm-up, in ${SLICES} rotating slices.`,
    "",
    row("non-streamed", ["req/s", "median ms", "p99 ms", "CPU ms/req"]),
    ...targets.map((t) => {
      const st = stats(t);
      return row(t.name, [fmt(st.rps, 1), fmt(st.median), fmt(st.p99), fmt(st.cpu)]);
    }),
    ...loadedComparison("ours / minimal", ours, base),
    ...loadedComparison("ours, no simulators / minimal", bare, base),
    ...loadedComparison("minimal, same bindings / minimal", bound, base),
    ...loadedComparison("ours / minimal with the same bindings", ours, bound),
    "",
    `Unloaded: ${SEQUENTIAL_REQUESTS} non-streamed completions per worker, one at a time.`,
    row("latency, one at a time", ["median ms", "p99 ms"]),
    ...targets.map((t) => {
      const st = stats(t);
      return row(t.name, [fmt(st.seqMedian), fmt(st.seqP99)]);
    }),
    unloadedComparison("ours - minimal", ours, base),
    unloadedComparison("ours, no simulators - minimal", bare, base),
    unloadedComparison("minimal, same bindings - minimal", bound, base),
    unloadedComparison("ours - minimal with the same bindings", ours, bound),
    "",
    `Streamed: ${STREAMS} streams per worker, one at a time: the upstream's first SSE byte -> the client's first byte.`,
    row("streamed first byte", ["median ms", "p99 ms"]),
    ...targets.map((t) => {
      const st = stats(t);
      return row(t.name, [fmt(st.first), fmt(st.firstP99)]);
    }),
    "",
    `goal: throughput >= 90% of minimal: ${s.rps / b.rps >= 0.9 ? "met" : "MISSED"} (${fmt((100 * s.rps) / b.rps, 1)}%)`,
    `goal: median within 1 ms of minimal, one at a time: ${s.seqMedian - b.seqMedian <= 1 ? "met" : "MISSED"} (${fmt(s.seqMedian - b.seqMedian)} ms; under load ${fmt(s.median - b.median)} ms)`,
    `goal: first streamed byte forwarded at once (within 1 ms of minimal): ${s.first - b.first <= 1 ? "met" : "MISSED"} (${fmt(s.first - b.first)} ms)`,
    "",
    "Against the minimal forwarder with the same bindings (both pay the assets router and the rate limiter simulator):",
    `  throughput, ours / minimal with the same bindings: ${fmt(s.rps / sb.rps)}x (${fmt((100 * s.rps) / sb.rps, 1)}%)`,
    `  unloaded median, ours - minimal with the same bindings: ${fmt(s.seqMedian - sb.seqMedian)} ms (under load ${fmt(s.median - sb.median)} ms)`,
    `  first streamed byte, ours - minimal with the same bindings: ${fmt(s.first - sb.first)} ms`,
    ...(portkey ? ["", ...portkeyComparison(ours, [bare, base], portkey, portkeyVersion ?? "")] : ["", PORTKEY_HOW_TO]),
  ].join("\n");
}

async function main(): Promise<void> {
  const workers: LocalWorker[] = [];
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-"));
  const upstream = await startScriptedUpstream({ apiKey: UPSTREAM_KEY });
  const stopAll = async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await upstream.close();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    const vars = { LLM_BASE_URL: `${upstream.url}/v1`, LLM_API_KEY: UPSTREAM_KEY };
    const portkeyDir = process.env[PORTKEY_GATEWAY_DIR_VAR];
    const portkey = portkeyDir ? await portkeyCheckout(portkeyDir) : null;
    console.log(
      `Starting the minimal forwarder (bare, and with our bindings), the passthrough (as configured, and without simulators)${portkey ? " and Portkey's gateway" : ""} ...`,
    );
    const clientHeaders = { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" };
    const start = async (
      name: string,
      worker: Promise<LocalWorker>,
      headers: Record<string, string> = clientHeaders,
    ): Promise<Target> => {
      const started = await worker;
      workers.push(started);
      const url = `${started.url}/v1/chat/completions`;
      return { name, url, headers, latencies: [], seconds: 0, requests: 0, cpu: 0, firstByteGaps: [], sequential: [] };
    };
    // One at a time: the first start compiles the Worker, and the machine may have two cores.
    const targets = [
      await start(
        MINIMAL,
        startLocalWorker({ config: "bench/minimal-forwarder.wrangler.toml", vars, database: false }),
      ),
      await start(OURS, startLocalWorker({ config: await benchConfig(tmp, true), vars })),
      await start(OURS_BARE, startLocalWorker({ config: await benchConfig(tmp, false), vars })),
      await start(
        MINIMAL_BOUND,
        startLocalWorker({
          config: await snapshotAssetsConfig(tmp, "bench/minimal-forwarder-bound.wrangler.toml"),
          vars,
          database: false,
        }),
      ),
    ];
    // Portkey's gateway last, when a checkout is named (without one, the report ends with how to name one).
    if (portkey) {
      targets.push(await start(PORTKEY, startPortkeyGateway(portkey), portkeyHeaders(vars.LLM_BASE_URL, UPSTREAM_KEY)));
    }

    // Streamed first, on a fresh machine: the upstream stamps its first SSE write, the client its first
    // read. One stream at a time, the workers taking turns, each worker with a script of its own.
    const streams = targets.map((target) => {
      const script = upstream.createScript([{ type: "completion", content: STREAM_CONTENT, chunkSize: 8 }], {
        repeat: true,
      });
      const body = JSON.stringify({
        model: "bench-model",
        stream: true,
        messages: [{ role: "user", content: `Stream. ${script.marker}` }],
      });
      return { target, script, body, stamps: [] as number[], warm: 0 };
    });
    for (const s of streams) {
      await checkAnswer(s.target, s.body, STREAM_CONTENT, true);
      await firstBytes(s.target, s.body, STREAM_WARMUP);
      s.warm = upstream.requests(s.script.id).length;
    }
    for (let i = 0; i < STREAMS; i++) {
      for (const s of streams) s.stamps.push(...(await firstBytes(s.target, s.body, 1)));
    }
    for (const s of streams) {
      const sent = upstream.requests(s.script.id).slice(s.warm);
      if (sent.length !== s.stamps.length) {
        throw new Error(`${s.target.name}: the upstream was sent ${sent.length} streams of ${s.stamps.length}`);
      }
      s.target.firstByteGaps = s.stamps.map((stamp, i) => stamp - (sent[i]?.firstByteAt ?? Number.NaN));
    }

    // Non-streamed: one script answers every request alike, with usage, so each worker does its full work.
    const plain = upstream.createScript([{ type: "completion", content: PLAIN_CONTENT }], {
      repeat: true,
      record: false,
    });
    const plainBody = JSON.stringify({
      model: "bench-model",
      messages: [
        { role: "system", content: "You are a benchmark." },
        { role: "user", content: `Say hello. ${plain.marker}` },
      ],
    });
    for (const target of targets) await checkAnswer(target, plainBody, PLAIN_CONTENT, false);
    for (const target of targets) await load(target, plainBody, WARMUP_REQUESTS);
    for (let i = 0; i < SEQUENTIAL_REQUESTS; i++) {
      for (const target of targets) {
        const t0 = performance.now();
        const response = await fetch(target.url, { method: "POST", headers: target.headers, body: plainBody });
        await response.arrayBuffer();
        target.sequential.push(performance.now() - t0);
        if (response.status !== 200) throw new Error(`${target.url} answered ${response.status}`);
      }
    }
    for (let slice = 0; slice < SLICES; slice++) {
      const order = targets.map((_, i) => targets[(i + slice) % targets.length] as Target);
      for (const target of order) {
        const cpuBefore = await cpuSeconds(target.url);
        const run = await load(target, plainBody, REQUESTS_PER_SLICE);
        const cpuAfter = await cpuSeconds(target.url);
        target.latencies.push(...run.latencies);
        target.seconds += run.seconds;
        target.requests += REQUESTS_PER_SLICE;
        target.cpu =
          target.cpu !== null && cpuBefore !== null && cpuAfter !== null ? target.cpu + cpuAfter - cpuBefore : null;
      }
    }

    console.log(report(targets, portkey?.version ?? null));
  } finally {
    await stopAll();
  }
}

await main();

// npm run bench:ws — WebSocket frames of one session under `wrangler dev`: how many assistant_delta frames a
// second reach one socket and ten sockets, and how long a streamed token takes from the upstream's write to the
// client's receive (the protocol carries no server time stamp, so the object's own receive time is not measured).
// The baseline, in the same run and on the same sockets, is the protocol's own echo: ping -> pong.
import { randomUUID } from "node:crypto";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, ratio, type Summary, summarize, table } from "./support/stats.ts";
import { now, startTokenUpstream, type TokenPlan, type TokenUpstream, tokenStamp } from "./support/token-upstream.ts";

/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const ROUNDS = 5;
const BURST_TOKENS = 1_000;
/** Pings sent at once on each socket (ten sockets with 2,000 each slow the local runtime to a crawl). */
const ECHO_BURST = 300;
const PACED: TokenPlan = { tokens: 300, intervalMs: 3 };
const ECHO_ROUND_TRIPS = 300;

interface Frame {
  type: string;
  text?: unknown;
}

/** One client socket: the time every frame arrived, by type. */
class BenchSocket {
  private deltas: { at: number; stamp: number | null }[] = [];
  private pongs: number[] = [];
  private waiters: (() => void)[] = [];
  private completed = 0;
  private failure: Error | null = null;

  private readonly ws: WebSocket;

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.addEventListener("message", (event) => {
      const at = now();
      const frame = JSON.parse(String(event.data)) as Frame;
      if (frame.type === "assistant_delta") this.deltas.push({ at, stamp: tokenStamp(frame.text) });
      else if (frame.type === "pong") this.pongs.push(at);
      else if (frame.type === "turn_completed") this.completed++;
      else if (frame.type === "error")
        this.failure = new Error(`the session sent an error frame: ${String(event.data)}`);
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  reset(): void {
    this.deltas = [];
    this.pongs = [];
    this.completed = 0;
  }

  async until(done: () => boolean, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (this.failure) throw this.failure;
      if (Date.now() > deadline) throw new Error("timed out waiting for frames");
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  turnDone = () => this.until(() => this.completed > 0);
  pongCount = () => this.pongs.length;
  pongTimes = () => [...this.pongs];
  deltaFrames = () => [...this.deltas];

  close(): void {
    this.ws.close(1000, "bench done");
  }
}

async function api(base: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

async function openSocket(base: string, sessionId: string): Promise<BenchSocket> {
  const { ticket } = await api(base, `/context/sessions/${sessionId}/ws-ticket`);
  const url = `${base.replace(/^http/, "ws")}/context/sessions/${sessionId}/ws?ticket=${String(ticket)}`;
  const ws = new WebSocket(url);
  const first = new Promise<void>((resolve, reject) => {
    ws.addEventListener("message", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`the socket to ${url} failed`)), { once: true });
  });
  const socket = new BenchSocket(ws);
  await first; // session_state
  return socket;
}

/** Frames a second from the first to the last of `times`, and over all sockets together. */
function rates(perSocket: number[][]): { perSocket: number; all: number; frames: number } {
  const each = perSocket.map((t) => (t.length - 1) / ((Math.max(...t) - Math.min(...t)) / 1000));
  const flat = perSocket.flat();
  return {
    perSocket: each.reduce((a, b) => a + b, 0) / each.length,
    all: (flat.length - perSocket.length) / ((Math.max(...flat) - Math.min(...flat)) / 1000),
    frames: flat.length,
  };
}

/** One turn whose answer streams `plan`; returns each socket's delta frames after checking every token came. */
async function streamTurn(upstream: TokenUpstream, sockets: BenchSocket[], plan: TokenPlan) {
  upstream.plan = plan;
  for (const s of sockets) s.reset();
  sockets[0]?.send({ type: "user_message", content: "Stream your answer.", clientMessageId: randomUUID() });
  await Promise.all(sockets.map((s) => s.turnDone()));
  const frames = sockets.map((s) => s.deltaFrames());
  for (const f of frames) {
    if (f.length !== plan.tokens) throw new Error(`a socket got ${f.length} of ${plan.tokens} token frames`);
  }
  return frames;
}

/** `count` pings sent at once on every socket; the pongs' arrival times. */
async function echoBurst(sockets: BenchSocket[], count: number): Promise<number[][]> {
  for (const s of sockets) s.reset();
  for (const s of sockets) for (let i = 0; i < count; i++) s.send({ type: "ping" });
  await Promise.all(sockets.map((s) => s.until(() => s.pongCount() >= count)));
  return sockets.map((s) => s.pongTimes());
}

/** `count` ping -> pong round trips one after another on every socket (the sockets at the same time). */
async function echoRoundTrips(sockets: BenchSocket[], count: number): Promise<number[]> {
  const trips: number[] = [];
  await Promise.all(
    sockets.map(async (s) => {
      s.reset();
      for (let i = 0; i < count; i++) {
        const sent = now();
        s.send({ type: "ping" });
        await s.until(() => s.pongCount() > i);
        trips.push((s.pongTimes()[i] ?? Number.NaN) - sent);
      }
    }),
  );
  return trips;
}

interface Figures {
  deltaRate: { perSocket: number[]; all: number[] };
  echoRate: { perSocket: number[]; all: number[] };
  tokenLatency: number[];
  echoTrip: number[];
}

async function measure(worker: LocalWorker, upstream: TokenUpstream, socketCount: number): Promise<Figures> {
  const { sessionId } = await api(worker.url, "/context/sessions", {});
  const sockets = await Promise.all(
    Array.from({ length: socketCount }, () => openSocket(worker.url, String(sessionId))),
  );
  const figures: Figures = {
    deltaRate: { perSocket: [], all: [] },
    echoRate: { perSocket: [], all: [] },
    tokenLatency: [],
    echoTrip: [],
  };
  try {
    // Warm-up: one small turn and a few echoes, not counted.
    await streamTurn(upstream, sockets, { tokens: 50, intervalMs: 0 });
    await echoBurst(sockets, 50);
    for (let round = 0; round < ROUNDS; round++) {
      progress(`${socketCount} socket(s), round ${round + 1} of ${ROUNDS}`);
      const echo = rates(await echoBurst(sockets, ECHO_BURST));
      figures.echoRate.perSocket.push(echo.perSocket);
      figures.echoRate.all.push(echo.all);
      const burst = await streamTurn(upstream, sockets, { tokens: BURST_TOKENS, intervalMs: 0 });
      const delta = rates(burst.map((f) => f.map((d) => d.at)));
      figures.deltaRate.perSocket.push(delta.perSocket);
      figures.deltaRate.all.push(delta.all);
      figures.echoTrip.push(...(await echoRoundTrips(sockets, ECHO_ROUND_TRIPS / ROUNDS)));
      const paced = await streamTurn(upstream, sockets, PACED);
      for (const f of paced) for (const d of f) if (d.stamp !== null) figures.tokenLatency.push(d.at - d.stamp);
    }
  } finally {
    for (const s of sockets) s.close();
  }
  return figures;
}

const progress = (message: string) => process.stderr.write(`bench:ws ${message}\n`);
const median = (values: number[]) => summarize(values).p50;

function report(results: Map<number, Figures>): string {
  const rateRows: string[][] = [];
  const latencyRows: string[][] = [];
  for (const [count, f] of results) {
    const label = `${count} socket${count === 1 ? "" : "s"}`;
    const echoPer = median(f.echoRate.perSocket);
    const echoAll = median(f.echoRate.all);
    rateRows.push([`echo (ping -> pong), ${label}`, fixed(echoPer, 0), fixed(echoAll, 0), "1.00x", "1.00x"]);
    const deltaPer = median(f.deltaRate.perSocket);
    const deltaAll = median(f.deltaRate.all);
    rateRows.push([
      `assistant_delta frames, ${label}`,
      fixed(deltaPer, 0),
      fixed(deltaAll, 0),
      ratio(deltaPer, echoPer),
      ratio(deltaAll, echoAll),
    ]);
    const trip: Summary = summarize(f.echoTrip);
    const token: Summary = summarize(f.tokenLatency);
    latencyRows.push([
      `echo round trip (client -> object -> client), ${label}`,
      String(trip.count),
      fixed(trip.p50),
      fixed(trip.p99),
      "1.00x",
      "1.00x",
    ]);
    latencyRows.push([
      `token: upstream write -> client receive, ${label}`,
      String(token.count),
      fixed(token.p50),
      fixed(token.p99),
      ratio(token.p50, trip.p50),
      ratio(token.p99, trip.p99),
    ]);
  }
  return [
    `WebSocket frames benchmark (wrangler dev, ${new Date().toISOString().slice(0, 10)}): medians of ${ROUNDS} rounds;`,
    `${BURST_TOKENS} tokens written back to back for the frame rates, ${PACED.tokens} tokens ${PACED.intervalMs} ms apart for the latency.`,
    "",
    table(["frames a second", "per socket", "all sockets", "÷ echo (per socket)", "÷ echo (all)"], rateRows),
    "",
    table(["latency", "samples", "p50 ms", "p99 ms", "p50 ÷ echo", "p99 ÷ echo"], latencyRows),
  ].join("\n");
}

async function main(): Promise<void> {
  const upstream = await startTokenUpstream();
  let worker: LocalWorker | null = null;
  const stop = async () => {
    await worker?.stop();
    await upstream.close();
  };
  process.once("SIGINT", () => void stop().then(() => process.exit(130)));
  try {
    progress("starting wrangler dev");
    worker = await startLocalWorker({ vars: { LLM_BASE_URL: upstream.baseUrl, LLM_API_KEY: "sk-bench" } });
    const results = new Map<number, Figures>();
    for (const count of [1, 10]) results.set(count, await measure(worker, upstream, count));
    console.log(report(results));
  } finally {
    await stop();
  }
}

await main();

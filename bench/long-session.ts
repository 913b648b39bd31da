// Benchmark of a session that lasts: one session of 1,000 turns through the real API (POST
// /context/sessions/:id/messages), against a scripted upstream answering every request at once, on one Worker
// under `wrangler dev` (as `npm start` runs it, with the default history budget, so compaction runs along the way).
// Reported against baselines measured in the same run:
//   - the median time of its last 20 messages against its first 20 (goal: at most 1.15x); each of those messages
//     takes turns with one to a control session started for the phase (a few turns long), so the ratio can be read
//     against what the machine did at the time (other work on a shared machine moves the milliseconds a lot);
//   - GET /context/sessions/:id of that session against a new session's (goal: at most 2x, and a body < 100 KiB);
//   - the first message to that session after its object was evicted (the Worker process restarted on the same
//     state) against a message to a warm object, and against the first message to a short session after the same
//     restart (each restart warms the isolate first with a message to a new session, so only the object is cold).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile, ratio, table } from "./support/stats.ts";

const UPSTREAM_KEY = "sk-bench-upstream";
/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const CLIENT_KEY = "dev-key";
const TURNS = Number(process.env.BENCH_TURNS ?? 1_000);
const EDGE = 20;
const VIEW_SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 5);
const ANSWER = "Noted; here is a short answer from the benchmark upstream.";
/** About 100 tokens a message: the default history budget (24,000) fills after some 200 turns. */
const FILLER = "The quick brown fox jumps over the lazy dog. ".repeat(8);

const now = () => performance.now();

async function api(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

async function newSession(url: string): Promise<string> {
  return (await api(url, "POST", "/context/sessions", {})).json.sessionId as string;
}

/** One message, timed; the turn must complete. */
async function timedMessage(url: string, sessionId: string, content: string): Promise<number> {
  const started = now();
  const { json } = await api(url, "POST", `/context/sessions/${sessionId}/messages`, { content });
  const ms = now() - started;
  if (json.status !== "completed") throw new Error(`a turn ended ${String(json.status)}: ${JSON.stringify(json)}`);
  return ms;
}

async function timedView(url: string, sessionId: string): Promise<{ ms: number; bytes: number }> {
  const started = now();
  const { text } = await api(url, "GET", `/context/sessions/${sessionId}`);
  return { ms: now() - started, bytes: new TextEncoder().encode(text).length };
}

const median = (values: number[]) => percentile(values, 50);

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-"));
  const stateDir = await mkdtemp(join(tmpdir(), "aptix-long-state-"));
  const upstream = await startScriptedUpstream({ apiKey: UPSTREAM_KEY });
  let worker: LocalWorker | null = null;
  const stopAll = async () => {
    await worker?.stop();
    await upstream.close();
    await rm(tmp, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    const config = await benchConfig(tmp, true);
    const vars = { LLM_BASE_URL: `${upstream.url}/v1`, LLM_API_KEY: UPSTREAM_KEY };
    const script = upstream.createScript([{ type: "completion", content: ANSWER }], { repeat: true, record: false });
    const say = (n: number) => `Message ${n}: ${FILLER} ${script.marker}`;
    console.log("Starting the Worker (wrangler dev) ...");
    worker = await startLocalWorker({ config, vars, stateDir });

    // The long session, turn by turn; a short one beside it for the wake-up baseline.
    const long = await newSession(worker.url);
    const short = await newSession(worker.url);
    await timedMessage(worker.url, short, say(0));
    const times: number[] = [];
    const controlFirst: number[] = [];
    const controlLast: number[] = [];
    let control = "";
    for (let n = 1; n <= TURNS; n++) {
      const measured = n <= EDGE || n > TURNS - EDGE;
      if (n === 1 || n === TURNS - EDGE + 1) control = await newSession(worker.url);
      times.push(await timedMessage(worker.url, long, say(n)));
      if (measured) (n <= EDGE ? controlFirst : controlLast).push(await timedMessage(worker.url, control, say(n)));
      if (n % 100 === 0) console.log(`  ${n} turns (last 100: median ${fixed(median(times.slice(-100)))} ms)`);
    }
    const first = times.slice(0, EDGE);
    const last = times.slice(-EDGE);
    const normalised = median(last) / median(controlLast) / (median(first) / median(controlFirst));

    // The view of the long session against a new one's, taking turns.
    const fresh = await newSession(worker.url);
    const longViews: number[] = [];
    const freshViews: number[] = [];
    let longBytes = 0;
    let freshBytes = 0;
    for (let i = 0; i < VIEW_SAMPLES; i++) {
      const a = await timedView(worker.url, long);
      const b = await timedView(worker.url, fresh);
      longViews.push(a.ms);
      freshViews.push(b.ms);
      longBytes = a.bytes;
      freshBytes = b.bytes;
    }

    // Wake-ups: the Worker process restarted on the same state evicts every object.
    const wakeLong: number[] = [];
    const wakeShort: number[] = [];
    const warmLong: number[] = [];
    const warmShort: number[] = [];
    for (let r = 0; r < RESTARTS; r++) {
      await worker.stop();
      worker = await startLocalWorker({ config, vars, stateDir, database: false });
      // The isolate warmed (code, D1, the routes and modes it keeps) by a turn in a new session.
      await timedMessage(worker.url, await newSession(worker.url), say(-1));
      const order = r % 2 === 0 ? [long, short] : [short, long];
      for (const id of order) {
        const ms = await timedMessage(worker.url, id, say(TURNS + r + 1));
        (id === long ? wakeLong : wakeShort).push(ms);
      }
      for (const id of order) {
        const ms = await timedMessage(worker.url, id, say(TURNS + r + 1));
        (id === long ? warmLong : warmShort).push(ms);
      }
    }

    const rows = [
      ["first 20 messages of the session (baseline), median ms", fixed(median(first)), "1.00x", ""],
      [
        `last 20 messages (turns ${TURNS - EDGE + 1} to ${TURNS}), median ms`,
        fixed(median(last)),
        ratio(median(last), median(first)),
        "≤ 1.15x",
      ],
      ["a control session's messages beside the first 20, median ms", fixed(median(controlFirst)), "", ""],
      ["a control session's messages beside the last 20, median ms", fixed(median(controlLast)), "", ""],
      ["last 20 ÷ first 20, each ÷ its control's", "", `${fixed(normalised)}x`, "≤ 1.15x"],
      ["GET the view of a new session (baseline), median ms", fixed(median(freshViews)), "1.00x", ""],
      [
        `GET the view of the ${TURNS}-turn session, median ms`,
        fixed(median(longViews)),
        ratio(median(longViews), median(freshViews)),
        "≤ 2x",
      ],
      [
        "… its body, KiB (a new session's)",
        `${fixed(longBytes / 1024, 1)} (${fixed(freshBytes / 1024, 1)})`,
        "",
        "< 100 KiB",
      ],
      ["message to a warm object, long session (baseline), median ms", fixed(median(warmLong)), "1.00x", ""],
      [
        "first message after eviction, long session, median ms",
        fixed(median(wakeLong)),
        ratio(median(wakeLong), median(warmLong)),
        "",
      ],
      [
        "first message after eviction, 1-turn session, median ms",
        fixed(median(wakeShort)),
        ratio(median(wakeShort), median(warmLong)),
        "",
      ],
      [
        "message to a warm object, 1-turn session, median ms",
        fixed(median(warmShort)),
        ratio(median(warmShort), median(warmLong)),
        "",
      ],
    ];
    console.log(
      [
        "",
        `Long session benchmark: one session of ${TURNS} turns through POST /context/sessions/:id/messages (a scripted`,
        `upstream answering at once, the default history budget, compaction on), the view ${VIEW_SAMPLES} times each way`,
        `taking turns, and ${RESTARTS} restarts of the Worker on the same state (each warmed by a new session's turn).`,
        "",
        table(["", "value", "ratio", "goal"], rows),
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

// Benchmark of a session that lasts: one session of 1,000 turns through the real API (POST
// /context/sessions/:id/messages), against a scripted model that echoes its whole input at length (every answer as
// long as the max_tokens it is sent, so compaction runs every few turns), answering at once, on one Worker under
// `wrangler dev` (as `npm start` runs it), in a mode on a route declaring an 8,000-token context (issue 41).
// Reported against baselines measured in the same run:
//   - the median time of its last 20 messages against its first 20 (goal: at most 1.15x); each of those messages
//     takes turns with one to a control session started for the phase (a few turns long), so the ratio can be read
//     against what the machine did at the time (other work on a shared machine moves the milliseconds a lot);
//   - GET /context/sessions/:id of that session against a new session's (goal: at most 2x, and a body < 100 KiB);
//   - every request the upstream was sent (turns and compactions), counted as it counts them (four characters a
//     token) with the max_tokens it was asked for, against the route's context (goal: none over);
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
/** The context the benchmark's route declares: its answers take 800 tokens (the reserve), its history 4,800. */
const CONTEXT_TOKENS = 8_000;
const ROUTE = "bench-echo";
const MODE = "bench-long";
/** About 100 tokens a message. */
const FILLER = "The quick brown fox jumps over the lazy dog. ".repeat(8);

type SentBody = { messages: unknown[]; tools?: unknown[]; max_tokens?: number };

/** A request as the scripted upstream counts it (four characters a token), with the answer it may write. */
const requestTokens = (body: SentBody) =>
  Math.ceil((JSON.stringify(body.messages).length + (body.tools ? JSON.stringify(body.tools).length : 0)) / 4) +
  (body.max_tokens ?? 0);

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
  return (await api(url, "POST", "/context/sessions", { mode: MODE })).json.sessionId as string;
}

/** The route to the echoing upstream, declaring its context, and a mode on it (dev-key is an operator). */
async function echoRoute(url: string, upstreamUrl: string): Promise<void> {
  await api(url, "PUT", `/admin/model-routes/${ROUTE}`, {
    provider: "openai_compatible",
    model: "scripted-model",
    baseUrl: `${upstreamUrl}/v1`,
    apiKeySecret: "BENCH_UPSTREAM_KEY",
    contextTokens: CONTEXT_TOKENS,
  });
  await api(url, "PUT", `/admin/modes/${MODE}`, {
    displayName: "Long session benchmark",
    description: "A mode on the echoing route.",
    systemPrompt: "Answer at length.",
    tools: ["agent_hello_world"],
    modelRoute: ROUTE,
  });
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
    // The echoing route's key is a secret of its own (a route may not name aptix's settings).
    const vars = { LLM_BASE_URL: `${upstream.url}/v1`, LLM_API_KEY: UPSTREAM_KEY, BENCH_UPSTREAM_KEY: UPSTREAM_KEY };
    const script = upstream.createScript([{ type: "echo" }], { repeat: true, charsPerToken: 4 });
    const say = (n: number) => `Message ${n}: ${script.marker} ${FILLER}`;
    console.log("Starting the Worker (wrangler dev) ...");
    worker = await startLocalWorker({ config, vars, stateDir, database: true });
    await echoRoute(worker.url, upstream.url).catch((error: unknown) => {
      console.error(worker?.output().slice(-3000));
      throw error;
    });

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

    // Every request the upstream was sent, as it counts them, against the route's context.
    const sent = upstream.requests(script.id).map((r) => requestTokens(JSON.parse(r.body) as SentBody));
    // A compaction's request opens with the compaction instructions (an echoed answer may quote them later on).
    const compactions = upstream
      .requests(script.id)
      .filter((r) =>
        r.body.startsWith('{"model":"scripted-model","messages":[{"role":"system","content":"You summarise'),
      ).length;
    const over = sent.filter((tokens) => tokens > CONTEXT_TOKENS).length;
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
      [
        `upstream requests (${compactions} of them compactions), the largest with its max_tokens, tokens`,
        `${sent.length}, ${Math.max(...sent)} (of ${CONTEXT_TOKENS})`,
        "",
        "",
      ],
      ["… requests over the route's context", String(over), "", "0"],
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
        `model echoing its input at length, answering at once, on a route declaring ${CONTEXT_TOKENS} tokens, compaction`,
        `on), the view ${VIEW_SAMPLES} times each way`,
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

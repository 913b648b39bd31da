// Benchmark of the agent's OpenAI door: time to the first streamed token through /agent/v1 against the same
// answer through the passthrough at /v1, from the same Worker under `wrangler dev` in front of the same scripted
// upstream, in the same run. The upstream answers every request with the same one-step streamed answer (no tool
// calls), so the difference is what the door adds before the model's first token reaches the client: the mode
// and base prompt, the history's fingerprints, the session, the turn's bookkeeping in the Durable Object, the
// frames it relays. Four ways of sending, one request at a time, taking turns so all see the same load:
//   /v1                 the passthrough (the client's own prompt, forwarded);
//   /agent/v1 header    the next message of a session the client names with X-Aptix-Session;
//   /agent/v1 history   the whole conversation resent without the header (most chat UIs and SDKs): the
//                       session is found by the history's head;
//   /agent/v1 new       a one-message conversation, so a new session (a new Durable Object) each time.
// A conversation starts over every MESSAGES_PER_SESSION messages. Each request's time is split at the upstream:
// until the upstream has the whole request, and from its first byte to the client's first token. All of it is
// measured on two Workers at once (SETUPS): as `npm start` runs it, and without wrangler's local trace collector.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { sseData } from "./support/sse-data.ts";
import { fixed, percentile } from "./support/stats.ts";

const UPSTREAM_KEY = "sk-bench-upstream";
/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const CLIENT_KEY = "dev-key";
const WARMUP = 20;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const MESSAGES_PER_SESSION = 10;
/** The goal: the door's median within this many ms of the passthrough's. */
const GOAL_MS = 5;
const ANSWER = "Hello from the benchmark upstream, chunk by chunk.";

/** A wall clock with sub-millisecond resolution, the same one the scripted upstream stamps with. */
const now = () => performance.timeOrigin + performance.now();

type Kind = "passthrough" | "header" | "history" | "new";
type Message = { role: "user" | "assistant"; content: string };

interface Way {
  name: string;
  kind: Kind;
  /** This way's own script on the upstream, so its requests can be told apart. */
  script: { id: string; marker: string };
  /** The conversation so far (the history way resends it), and the session the header way names. */
  history: Message[];
  session?: string;
  firstToken: number[];
  /** Clock stamps of each measured request: sent, and its first token received. */
  sentAt: number[];
  tokenAt: number[];
}

function requestOf(way: Way, i: number): { path: string; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { authorization: `Bearer ${CLIENT_KEY}`, "content-type": "application/json" };
  const question: Message = { role: "user", content: `Say hello (${i}). ${way.script.marker}` };
  if (way.kind === "passthrough") {
    return {
      path: "/v1/chat/completions",
      headers,
      body: JSON.stringify({ model: "bench-model", stream: true, messages: [question] }),
    };
  }
  if (way.kind === "header" && way.session) headers["x-aptix-session"] = way.session;
  const messages = way.kind === "history" ? [...way.history, question] : [question];
  return {
    path: "/agent/v1/chat/completions",
    headers,
    body: JSON.stringify({ model: "aptix-agent/general", stream: true, messages }),
  };
}

/** The text of one SSE stream's content deltas, and the clock when the first arrived; an error event throws. */
async function readAnswer(response: Response, path: string): Promise<{ text: string; tokenAt: number | null }> {
  if (response.status !== 200 || !response.body) {
    throw new Error(`${path} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  let text = "";
  let tokenAt: number | null = null;
  for await (const data of sseData(response.body)) {
    const parsed = JSON.parse(data) as { error?: unknown; choices?: { delta?: { content?: string } }[] };
    if (parsed.error) throw new Error(`${path} streamed an error: ${data}`);
    const content = parsed.choices?.[0]?.delta?.content;
    if (content) {
      tokenAt ??= now();
      text += content;
    }
  }
  return { text, tokenAt };
}

/** One streamed request of `way`, timed to its first token; the conversation goes on (or starts over). */
async function timeStream(url: string, way: Way, i: number): Promise<void> {
  if (i % MESSAGES_PER_SESSION === 0) {
    way.history = [];
    delete way.session;
  }
  const { path, headers, body } = requestOf(way, i);
  const sentAt = now();
  const response = await fetch(`${url}${path}`, { method: "POST", headers, body });
  const session = response.headers.get("x-aptix-session");
  const { text, tokenAt } = await readAnswer(response, path);
  if (tokenAt === null || text !== ANSWER) throw new Error(`${path} streamed another answer: ${JSON.stringify(text)}`);
  if (way.kind === "history") {
    if (way.session && session !== way.session) throw new Error("the resent history started another session");
    way.history.push(JSON.parse(body).messages.at(-1) as Message, { role: "assistant", content: text });
  }
  if (session) way.session = session;
  way.firstToken.push(tokenAt - sentAt);
  way.sentAt.push(sentAt);
  way.tokenAt.push(tokenAt);
}

const row = (name: string, cells: string[]) => `${name.padEnd(34)}${cells.map((c) => c.padStart(13)).join("")}`;

/**
 * The Worker as `npm start` runs it, and the same Worker without wrangler's local trace collector (the local
 * explorer's observability, X_LOCAL_OBSERVABILITY): the collector is a streaming tail worker that receives every
 * span of every invocation (each storage statement, each call to an object) on the same thread as the Worker, a
 * cost of the dev tool that grows with the spans a request makes and that a deployed Worker does not carry.
 */
const SETUPS = [
  { label: "as npm start runs it (wrangler's local trace collector on)", localObservability: true },
  { label: "without wrangler's local trace collector (X_LOCAL_OBSERVABILITY=false)", localObservability: false },
] as const;

interface Setup {
  label: string;
  url: string;
  ways: Way[];
}

function report(setup: Setup, split: (w: Way) => { before: number; relay: number }): string[] {
  const median = (w: Way) => percentile(w.firstToken, 50);
  const [base, ...agent] = setup.ways as [Way, ...Way[]];
  return [
    "",
    `${setup.label}:`,
    row("ms to the first token", ["median", "p99", "to upstream", "relay", "- /v1", "/ /v1"]),
    ...setup.ways.map((w) =>
      row(w.name, [
        fixed(median(w)),
        fixed(percentile(w.firstToken, 99)),
        fixed(split(w).before),
        fixed(split(w).relay),
        w === base ? "" : fixed(median(w) - median(base)),
        w === base ? "" : `${fixed(median(w) / median(base))}x`,
      ]),
    ),
    ...agent.map((w) => {
      const difference = median(w) - median(base);
      return `goal: first token within +${GOAL_MS} ms of /v1 (median), ${w.name}: ${difference <= GOAL_MS ? "met" : "MISSED"} (${fixed(difference)} ms)`;
    }),
  ];
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-"));
  const upstream = await startScriptedUpstream({ apiKey: UPSTREAM_KEY });
  const workers: LocalWorker[] = [];
  const stopAll = async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await upstream.close();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    console.log(
      "Starting the Worker twice (wrangler dev, as npm start runs it, and without the local trace collector) ...",
    );
    const config = await benchConfig(tmp, true);
    const vars = { LLM_BASE_URL: `${upstream.url}/v1`, LLM_API_KEY: UPSTREAM_KEY };
    const way = (name: string, kind: Kind): Way => ({
      name,
      kind,
      script: upstream.createScript([{ type: "completion", content: ANSWER, chunkSize: 8 }], { repeat: true }),
      history: [],
      firstToken: [],
      sentAt: [],
      tokenAt: [],
    });
    const setups: Setup[] = [];
    for (const { label, localObservability } of SETUPS) {
      const worker = await startLocalWorker({ config, vars, localObservability });
      workers.push(worker);
      setups.push({
        label,
        url: worker.url,
        ways: [
          way("/v1 (passthrough)", "passthrough"),
          way("/agent/v1, X-Aptix-Session", "header"),
          way("/agent/v1, history resent", "history"),
          way("/agent/v1, new session", "new"),
        ],
      });
    }
    // Every way of both Workers in one rotation, so all see the same load over the run.
    const all = setups.flatMap((setup) => setup.ways.map((w) => ({ url: setup.url, way: w })));
    for (let i = 0; i < WARMUP; i++) for (const { url, way: w } of all) await timeStream(url, w, i);
    for (const { way: w } of all) {
      w.firstToken = [];
      w.sentAt = [];
      w.tokenAt = [];
    }
    for (let i = 0; i < SAMPLES; i++) {
      for (let k = 0; k < all.length; k++) {
        const { url, way: w } = all[(k + i) % all.length] as { url: string; way: Way };
        await timeStream(url, w, i);
      }
    }

    // Where the time goes: until the upstream has the whole request, and from its first byte to the token.
    const split = (w: Way) => {
      const sent = upstream.requests(w.script.id).slice(WARMUP);
      const before = w.sentAt.map((at, i) => (sent[i]?.receivedAt ?? Number.NaN) - at);
      const relay = w.tokenAt.map((at, i) => at - (sent[i]?.firstByteAt ?? Number.NaN));
      return { before: percentile(before, 50), relay: percentile(relay, 50) };
    };
    console.log(
      [
        "",
        "Agent door benchmark: the Worker under wrangler dev, twice, in front of the same scripted upstream answering",
        `the same one-step streamed answer; ${SAMPLES} streams per way after ${WARMUP} warm-up, one at a time, all`,
        `ways of both Workers taking turns; a conversation starts over every ${MESSAGES_PER_SESSION} messages.`,
        ...setups.flatMap((setup) => report(setup, split)),
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

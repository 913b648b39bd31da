// npm run bench:peers — one agent turn through aptix and through two peers built on Cloudflare's Agents SDK,
// each under `wrangler dev` in its own process, against ONE scripted upstream in this process that answers at
// once: latency of a turn one at a time (median, p99) and throughput with 20 sessions at once (turns/s), for a
// 1-step turn (the model answers at once) and a 3-step turn (two calls of the hello tool, then an answer).
// `wrangler dev` is slow per request, so the figures that matter are the ratios to the peers in the same run.
//
// The three workers compared, each driven as its own client would drive it:
// - aptix (wrangler.toml, copied with a model call limit no benchmark reaches): a session is opened with
//   POST /context/sessions, the turn is POST /context/sessions/:id/messages, which answers the finished turn.
// - AIChatAgent (bench/peers/chat-agent.ts, @cloudflare/ai-chat): the SDK runs chat turns only over the
//   agent's WebSocket (its onRequest answers nothing but GET .../get-messages; saveMessages() is the
//   server-side way in, for schedules and webhooks), so a session is a WebSocket to /agents/chat-peer/<name>,
//   open once its connect frames arrived, and the turn is what the SDK's WebSocketChatTransport (useAgentChat)
//   sends: cf_agent_use_chat_request with {messages, trigger: "submit-message"}, until the request's
//   cf_agent_use_chat_response frame with done: true, which the SDK holds back until the reply is persisted.
// - plain Agent (bench/peers/plain-agent.ts, agents): HTTP. A session is opened with GET /agents/plain-peer/
//   <name> (the object starts), the turn is POST with {content}, answered after the conversation is stored.
// Opening a session is not part of the turn's time; every session holds one turn, so no history grows.
// A fourth worker, aptix without the rate limiter binding and the static assets (as in bench/passthrough.ts),
// is a diagnostic: the peers have neither, and wrangler dev simulates both locally (a limiter object behind
// every limit() call, an assets router in front of every request). The one-at-a-time turns are recorded by
// the upstream, whose stamps split a turn into: sent -> first model call, model call -> next model call, and
// last model call -> the client has the finished turn.
//
// All of them send the model the same system prompt: aptix's own enhanced prompt for its default mode, read at
// start-up from GET /v1/system-prompts/default/enhanced and written into the peers' configs. The peers offer
// one tool, the hello tool's equivalent; aptix offers its default mode's tools (printed below), so its model
// requests are larger. The rounds interleave the workers, rotating their order. A verification turn per
// worker and turn shape, recorded by the upstream, checks the model calls, the system prompt and that the
// tool results reached the model; every measured turn is checked for its final text and tool results.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, statfs } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptStep } from "../test/upstream/script-types.ts";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig, peerConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, ratio, summarize, table } from "./support/stats.ts";
import { chatAgentRequest } from "./support/turn-doors.ts";

/** seeds/local.sql's key, which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const UPSTREAM_KEY = "sk-bench-upstream";
const MODEL = "bench-model";
const CONCURRENT_SESSIONS = 20;
const ROUNDS = 5;
/** Turns per worker, turn shape and round, one at a time (the workers taking turns). */
const SEQUENTIAL_TURNS = 40;
/** Batches of CONCURRENT_SESSIONS turns per worker, turn shape and round. */
const BATCHES = 4;
const WARMUP_TURNS = 10;
const WARMUP_BATCHES = 1;
/** A turn or a session that takes longer has failed (the run stops instead of waiting for ever). */
const TIMEOUT_MS = 120_000;

const FINAL_TEXT = "Both greetings are ready: Dana and Lee have been welcomed to Aptix.";
const GREETED = ["Dana", "Lee"];

interface Shape {
  label: string;
  /** Model calls the turn makes. */
  steps: number;
  /** Tool results the turn produces. */
  tools: number;
  script: () => ScriptStep[];
}

const SHAPES: Shape[] = [
  {
    label: "1 step",
    steps: 1,
    tools: 0,
    script: () => [{ type: "completion", content: FINAL_TEXT }],
  },
  {
    label: "3 steps",
    steps: 3,
    tools: 2,
    script: () => [
      ...GREETED.map(
        (name): ScriptStep => ({
          type: "completion",
          content: null,
          toolCalls: [{ name: "agent_hello_world", arguments: JSON.stringify({ name }) }],
        }),
      ),
      { type: "completion", content: FINAL_TEXT },
    ],
  },
];

/** What a client saw of a finished turn. */
interface TurnResult {
  text: string;
  toolResults: number;
}

interface Session {
  turn(content: string): Promise<TurnResult>;
  close(): void;
}

interface Worker {
  name: string;
  open(): Promise<Session>;
}

const timeout = () => AbortSignal.timeout(TIMEOUT_MS);

async function json(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

function aptixWorker(name: string, base: string): Worker {
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  return {
    name,
    async open() {
      const created = await json(
        await fetch(`${base}/context/sessions`, { method: "POST", headers, body: "{}", signal: timeout() }),
        "POST /context/sessions",
      );
      const url = `${base}/context/sessions/${String(created.sessionId)}/messages`;
      return {
        async turn(content) {
          const turn = await json(
            await fetch(url, { method: "POST", headers, body: JSON.stringify({ content }), signal: timeout() }),
            "aptix turn",
          );
          if (turn.status !== "completed") throw new Error(`aptix turn ended ${JSON.stringify(turn).slice(0, 500)}`);
          const calls = (turn.toolCalls ?? []) as { wasExecuted?: boolean }[];
          return { text: String(turn.text), toolResults: calls.filter((c) => c.wasExecuted).length };
        },
        close() {},
      };
    },
  };
}

function plainAgentWorker(base: string): Worker {
  return {
    name: PLAIN,
    async open() {
      const url = `${base}/agents/plain-peer/${randomUUID()}`;
      await json(await fetch(url, { signal: timeout() }), "GET plain-peer");
      return {
        async turn(content) {
          const turn = await json(
            await fetch(url, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ content }),
              signal: timeout(),
            }),
            "plain Agent turn",
          );
          return { text: String(turn.text), toolResults: Number(turn.toolResults) };
        },
        close() {},
      };
    },
  };
}

interface ChatFrame {
  type?: string;
  id?: string;
  body?: string;
  done?: boolean;
  error?: boolean;
  outcome?: string;
}

/** One WebSocket to an AIChatAgent, speaking the SDK's chat protocol as its WebSocketChatTransport does. */
function chatAgentWorker(base: string): Worker {
  return {
    name: CHAT,
    async open() {
      const ws = new WebSocket(`${base.replace(/^http/, "ws")}/agents/chat-peer/${randomUUID()}`);
      const pending = new Map<
        string,
        { result: TurnResult; failure?: Error; resolve(r: TurnResult): void; reject(e: Error): void }
      >();
      ws.addEventListener("message", (event) => {
        const frame = JSON.parse(String(event.data)) as ChatFrame;
        if (frame.type !== "cf_agent_use_chat_response" || !frame.id) return;
        const turn = pending.get(frame.id);
        if (!turn) return;
        if (frame.error) {
          pending.delete(frame.id);
          turn.reject(new Error(`AIChatAgent turn failed: ${frame.body ?? ""}`));
          return;
        }
        if (frame.body?.trim()) {
          const chunk = JSON.parse(frame.body) as { type: string; delta?: string };
          if (chunk.type === "text-delta") turn.result.text += chunk.delta ?? "";
          else if (chunk.type === "tool-output-available") turn.result.toolResults++;
          else if (chunk.type === "error") turn.failure = new Error(`AIChatAgent stream error: ${frame.body}`);
        }
        if (frame.done) {
          pending.delete(frame.id);
          if (turn.failure) turn.reject(turn.failure);
          else if (frame.outcome && frame.outcome !== "completed") {
            turn.reject(new Error(`AIChatAgent turn ended ${frame.outcome}`));
          } else turn.resolve(turn.result);
        }
      });
      ws.addEventListener("close", () => {
        for (const turn of pending.values()) turn.reject(new Error("the AIChatAgent socket closed mid-turn"));
        pending.clear();
      });
      // Open once the agent's connect frames came: cf_agent_mcp_servers is the last of them.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("the AIChatAgent socket sent no connect frames")), TIMEOUT_MS);
        ws.addEventListener("message", (event) => {
          if ((JSON.parse(String(event.data)) as ChatFrame).type === "cf_agent_mcp_servers") {
            clearTimeout(timer);
            resolve();
          }
        });
        ws.addEventListener(
          "error",
          () => {
            clearTimeout(timer);
            reject(new Error("the AIChatAgent socket failed"));
          },
          { once: true },
        );
      });
      return {
        turn(content) {
          const { id, frame } = chatAgentRequest(content);
          return new Promise<TurnResult>((resolve, reject) => {
            const timer = setTimeout(() => {
              pending.delete(id);
              reject(new Error(`the AIChatAgent turn took over ${TIMEOUT_MS} ms`));
            }, TIMEOUT_MS);
            pending.set(id, {
              result: { text: "", toolResults: 0 },
              resolve: (r) => {
                clearTimeout(timer);
                resolve(r);
              },
              reject: (e) => {
                clearTimeout(timer);
                reject(e);
              },
            });
            ws.send(frame);
          });
        },
        close() {
          ws.close(1000, "bench done");
        },
      };
    },
  };
}

/** A wall clock with sub-millisecond resolution, the one the scripted upstream stamps its answers with. */
const now = () => performance.timeOrigin + performance.now();

type ScriptFactory = (steps: ScriptStep[]) => { id: string; marker: string };

/** When a turn was sent and when its client had the finished turn, and the script that answered it. */
interface TurnTiming {
  start: number;
  end: number;
  script: string;
}

/** One turn of `shape` on a fresh session, opened first. */
async function timedTurn(worker: Worker, shape: Shape, createScript: ScriptFactory): Promise<TurnTiming> {
  const session = await worker.open();
  try {
    return await runTurn(worker, session, shape, createScript);
  } finally {
    session.close();
  }
}

/** One turn, after checking what the client got: the final text, and as many tool results as the shape has. */
async function runTurn(
  worker: Worker,
  session: Session,
  shape: Shape,
  createScript: ScriptFactory,
): Promise<TurnTiming> {
  const script = createScript(shape.script());
  const content = `Say hello to ${GREETED.join(" and ")}. ${script.marker}`;
  const start = now();
  const result = await session.turn(content);
  const end = now();
  if (result.text !== FINAL_TEXT || result.toolResults !== shape.tools) {
    throw new Error(
      `${worker.name}, ${shape.label}: got text ${JSON.stringify(result.text)} with ${result.toolResults} tool results`,
    );
  }
  return { start, end, script: script.id };
}

/** CONCURRENT_SESSIONS sessions opened first, then one turn on each at once: the batch's seconds and latencies. */
async function batch(worker: Worker, shape: Shape, createScript: ScriptFactory) {
  const sessions = await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, () => worker.open()));
  try {
    const start = now();
    const turns = await Promise.all(sessions.map((s) => runTurn(worker, s, shape, createScript)));
    return { seconds: (now() - start) / 1000, latencies: turns.map((t) => t.end - t.start) };
  } finally {
    for (const s of sessions) s.close();
  }
}

interface Figures {
  sequential: number[];
  /** One at a time: the turn sent -> the first model call answered. */
  toFirstCall: number[];
  /** One at a time: a model call answered -> the next one answered (reading it, the tool, the next request). */
  betweenCalls: number[];
  /** One at a time: the last model call answered -> the client has the finished turn. */
  fromLastCall: number[];
  loaded: number[];
  seconds: number;
  turns: number;
}

const emptyFigures = (): Figures => ({
  sequential: [],
  toFirstCall: [],
  betweenCalls: [],
  fromLastCall: [],
  loaded: [],
  seconds: 0,
  turns: 0,
});

const progress = (message: string) => process.stderr.write(`bench:peers ${message}\n`);

interface Upstream {
  url: string;
  createScript: (steps: ScriptStep[], record: boolean) => { id: string; marker: string };
  requests: (id: string) => { body: string; firstByteAt?: number }[];
}

/**
 * A recorded one-at-a-time turn into `f`: its latency, and where its time went by the upstream's stamps (it
 * answers at once, so a call's first byte is about when the call arrived). Checks the number of model calls.
 */
function addSequential(f: Figures, worker: Worker, shape: Shape, upstream: Upstream, turn: TurnTiming): void {
  const calls = upstream.requests(turn.script).map((r) => r.firstByteAt ?? Number.NaN);
  if (calls.length !== shape.steps) {
    throw new Error(`${worker.name}, ${shape.label}: ${calls.length} model calls, expected ${shape.steps}`);
  }
  f.sequential.push(turn.end - turn.start);
  f.toFirstCall.push((calls[0] ?? Number.NaN) - turn.start);
  for (let i = 1; i < calls.length; i++) f.betweenCalls.push((calls[i] ?? Number.NaN) - (calls[i - 1] ?? Number.NaN));
  f.fromLastCall.push(turn.end - (calls.at(-1) ?? Number.NaN));
}

/**
 * One recorded turn per worker and shape: the right number of model calls, each with the same system prompt,
 * and the tool results (the greetings) in the model's later requests. Returns the first call's body size.
 */
async function verify(worker: Worker, shape: Shape, upstream: Upstream, prompt: string): Promise<number> {
  const script = upstream.createScript(shape.script(), true);
  await timedTurn(worker, shape, () => script);
  const calls = upstream.requests(script.id);
  if (calls.length !== shape.steps) {
    throw new Error(`${worker.name}, ${shape.label}: ${calls.length} model calls, expected ${shape.steps}`);
  }
  calls.forEach((call, i) => {
    const body = JSON.parse(call.body) as { messages: { role: string; content: unknown }[] };
    const system = body.messages[0];
    if (system?.role !== "system" || system.content !== prompt) {
      throw new Error(`${worker.name}, ${shape.label}: model call ${i + 1} has another system prompt`);
    }
    GREETED.slice(0, i).forEach((name) => {
      if (!call.body.includes(`Hello, ${name}! Welcome to Aptix.`)) {
        throw new Error(`${worker.name}, ${shape.label}: model call ${i + 1} lacks the greeting of ${name}`);
      }
    });
  });
  return Buffer.byteLength(calls[0]?.body ?? "");
}

/** A row of the time breakdown: its label, and the samples it summarises. */
type Phase = [string, (x: Figures) => number[]];

const APTIX = "aptix";
const APTIX_BARE = "aptix, no simulators";
const CHAT = "AIChatAgent";
const PLAIN = "plain Agent";

/** One figure of every worker and turn shape, as the tables show it. */
interface Metric {
  label: string;
  value: (f: Figures) => number;
  digits: number;
}

const METRICS: { title: string; metrics: Metric[] }[] = [
  {
    title: "one at a time",
    metrics: [
      { label: "median ms", value: (f) => summarize(f.sequential).p50, digits: 2 },
      { label: "p99 ms", value: (f) => summarize(f.sequential).p99, digits: 2 },
    ],
  },
  {
    title: `${CONCURRENT_SESSIONS} sessions at once`,
    metrics: [
      { label: "turns/s", value: (f) => f.turns / f.seconds, digits: 1 },
      { label: "median ms of a turn", value: (f) => summarize(f.loaded).p50, digits: 2 },
    ],
  },
];

const signed = (n: number) => (Number.isFinite(n) ? `${n >= 0 ? "+" : ""}${n.toFixed(2)}` : "-");

/** tmpfs's magic number in statfs's `type` (Linux). */
const TMPFS = 0x01021994;

/**
 * Where the workers keep their state (D1, Durable Objects' SQLite) and whether that is in memory: under `wrangler dev`
 * each storage commit is a synchronous write (fsync on a disk) on the one thread that runs a Worker and all its
 * objects, which production's replicated storage does not put on the thread; TMPDIR=/dev/shm takes that cost out
 * for every worker alike.
 */
async function stateLine(dir: string): Promise<string> {
  const fs = await statfs(dir).catch(() => null);
  const kind = fs === null ? "unknown" : fs.type === TMPFS ? "tmpfs: in memory" : "on disk";
  return `State of every worker (D1, Durable Objects' SQLite) under ${tmpdir()} (${kind}).`;
}

function report(
  prompt: { length: number; tools: string[] },
  results: Map<string, Map<string, Figures>>,
  requestBytes: Map<string, number>,
  state: string,
): string {
  const figures = (shape: Shape, name: string) => results.get(shape.label)?.get(name) as Figures;
  const tables = METRICS.flatMap(({ title, metrics }) => {
    const rows = SHAPES.flatMap((shape) =>
      metrics.map((m) => {
        const v = (name: string) => m.value(figures(shape, name));
        return [
          `${shape.label}, ${m.label}`,
          ...[APTIX, CHAT, PLAIN].map((n) => fixed(v(n), m.digits)),
          ratio(v(APTIX), v(CHAT)),
          ratio(v(APTIX), v(PLAIN)),
        ];
      }),
    );
    return [table([title, APTIX, CHAT, PLAIN, `${APTIX} ÷ ${CHAT}`, `${APTIX} ÷ ${PLAIN}`], rows), ""];
  });
  const bareRows = METRICS.flatMap(({ title, metrics }) =>
    SHAPES.flatMap((shape) =>
      metrics.map((m) => {
        const v = (name: string) => m.value(figures(shape, name));
        return [
          `${shape.label}, ${title}, ${m.label}`,
          fixed(v(APTIX_BARE), m.digits),
          ratio(v(APTIX_BARE), v(APTIX)),
          ratio(v(APTIX_BARE), v(CHAT)),
          ratio(v(APTIX_BARE), v(PLAIN)),
        ];
      }),
    ),
  );
  const phaseRows = SHAPES.flatMap((shape) => {
    const phases: Phase[] = [["turn sent -> 1st model call", (x) => x.toFirstCall]];
    if (shape.steps > 1) phases.push(["model call -> next model call", (x) => x.betweenCalls]);
    phases.push(["last model call -> client has the turn", (x) => x.fromLastCall]);
    return phases.map(([label, values]) => {
      const median = (name: string) => summarize(values(figures(shape, name))).p50;
      return [
        `${shape.label}: ${label}`,
        ...[APTIX, APTIX_BARE, CHAT, PLAIN].map((n) => fixed(median(n))),
        signed(median(APTIX) - median(CHAT)),
        signed(median(APTIX) - median(PLAIN)),
        signed(median(APTIX_BARE) - median(PLAIN)),
      ];
    });
  });
  const sample = SHAPES[0] ? figures(SHAPES[0], APTIX) : undefined;
  return [
    `Agent turn benchmark (wrangler dev, ${new Date().toISOString().slice(0, 10)}): aptix against an AIChatAgent and a plain Agent`,
    "(Cloudflare Agents SDK, AI SDK streamText), one scripted upstream answering at once.",
    `System prompt: aptix's enhanced default prompt (GET /v1/system-prompts/default/enhanced), ${prompt.length} characters,`,
    `the same for all. aptix offers the model ${prompt.tools.length} tool(s) (${prompt.tools.join(", ")}); the peers offer 1.`,
    `First model request of a 1-step turn, bytes: ${[APTIX, CHAT, PLAIN].map((n) => `${n} ${requestBytes.get(n) ?? "?"}`).join(", ")}.`,
    `${ROUNDS} rounds after warm-up, the workers' order rotating; per worker and turn shape ${sample?.sequential.length ?? 0} turns one at a time,`,
    `and ${sample?.turns ?? 0} turns in batches of ${CONCURRENT_SESSIONS} sessions at once. Sessions are opened before the clock starts.`,
    state,
    "",
    ...tables,
    "Ratios of ms: above 1 means aptix is slower. Ratios of turns/s: below 1 means aptix is slower.",
    "",
    `Diagnostic: ${APTIX_BARE} (aptix without the rate limiter binding and the static assets, whose wrangler dev`,
    "simulators the peers do not pay: a limiter object behind every limit() call, an assets router in front).",
    table(["turn", APTIX_BARE, `÷ ${APTIX}`, `÷ ${CHAT}`, `÷ ${PLAIN}`], bareRows),
    "",
    "Where a turn's time goes, one at a time, by the upstream's stamps (medians, ms; differences in ms):",
    table(
      [
        "phase",
        APTIX,
        APTIX_BARE,
        CHAT,
        PLAIN,
        `${APTIX} - ${CHAT}`,
        `${APTIX} - ${PLAIN}`,
        `no simulators - ${PLAIN}`,
      ],
      phaseRows,
    ),
  ].join("\n");
}

async function main(): Promise<void> {
  const started: LocalWorker[] = [];
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-peers-"));
  const scripted = await startScriptedUpstream({ apiKey: UPSTREAM_KEY });
  const upstream: Upstream = {
    url: scripted.url,
    createScript: (steps, record) => scripted.createScript(steps, { record }),
    requests: (id) => scripted.requests(id),
  };
  let stopping: Promise<void> | null = null;
  const stopAll = () => {
    stopping ??= (async () => {
      await Promise.all(started.map((w) => w.stop()));
      await scripted.close();
      await rm(tmp, { recursive: true, force: true });
    })();
    return stopping;
  };
  process.once("SIGINT", () => void stopAll().then(() => process.exit(130)));
  try {
    const vars = { LLM_BASE_URL: `${scripted.url}/v1`, LLM_API_KEY: UPSTREAM_KEY, LLM_MODEL: MODEL };
    const start = async (worker: Promise<LocalWorker>) => {
      const w = await worker;
      started.push(w);
      return w;
    };
    // One at a time: each first start bundles its Worker, and the machine may have two cores.
    progress("starting aptix under wrangler dev");
    const aptix = await start(startLocalWorker({ config: await benchConfig(tmp, true), vars }));
    const enhanced = await json(
      await fetch(`${aptix.url}/v1/system-prompts/default/enhanced`, { headers: { authorization: `Bearer ${KEY}` } }),
      "GET /v1/system-prompts/default/enhanced",
    );
    const prompt = String(enhanced.prompt ?? "");
    if (!prompt) throw new Error(`no prompt in ${JSON.stringify(enhanced).slice(0, 300)}`);
    const tools = Array.isArray(enhanced.tools) ? enhanced.tools.map(String) : [];
    progress("starting the AIChatAgent peer");
    const chat = await start(
      startLocalWorker({ config: await peerConfig(tmp, "chat-agent.wrangler.toml", prompt), vars, database: false }),
    );
    progress("starting the plain Agent peer");
    const plain = await start(
      startLocalWorker({ config: await peerConfig(tmp, "plain-agent.wrangler.toml", prompt), vars, database: false }),
    );
    progress("starting aptix without simulators (the diagnostic)");
    const bare = await start(startLocalWorker({ config: await benchConfig(tmp, false), vars }));
    const workers = [
      aptixWorker(APTIX, aptix.url),
      chatAgentWorker(chat.url),
      plainAgentWorker(plain.url),
      aptixWorker(APTIX_BARE, bare.url),
    ];
    const names = workers.map((w) => w.name);
    const unrecorded: ScriptFactory = (steps) => upstream.createScript(steps, false);
    const recorded: ScriptFactory = (steps) => upstream.createScript(steps, true);

    progress("verification turns (recorded by the upstream)");
    const requestBytes = new Map<string, number>();
    for (const shape of SHAPES) {
      for (const worker of workers) {
        const bytes = await verify(worker, shape, upstream, prompt);
        if (shape.steps === 1) requestBytes.set(worker.name, bytes);
      }
    }

    progress("warm-up");
    for (const shape of SHAPES) {
      for (let i = 0; i < WARMUP_TURNS; i++) for (const w of workers) await timedTurn(w, shape, unrecorded);
      for (let i = 0; i < WARMUP_BATCHES; i++) for (const w of workers) await batch(w, shape, unrecorded);
    }

    const results = new Map<string, Map<string, Figures>>(
      SHAPES.map((s) => [s.label, new Map(names.map((n) => [n, emptyFigures()]))]),
    );
    for (let round = 0; round < ROUNDS; round++) {
      const order = workers.map((_, i) => workers[(i + round) % workers.length] as Worker);
      for (const shape of SHAPES) {
        progress(`round ${round + 1} of ${ROUNDS}, ${shape.label}`);
        const figures = results.get(shape.label) as Map<string, Figures>;
        for (let i = 0; i < SEQUENTIAL_TURNS; i++) {
          for (const w of order) {
            const turn = await timedTurn(w, shape, recorded);
            addSequential(figures.get(w.name) as Figures, w, shape, upstream, turn);
          }
        }
        for (let i = 0; i < BATCHES; i++) {
          for (const w of order) {
            const run = await batch(w, shape, unrecorded);
            const f = figures.get(w.name) as Figures;
            f.loaded.push(...run.latencies);
            f.seconds += run.seconds;
            f.turns += run.latencies.length;
          }
        }
      }
    }
    console.log(report({ length: prompt.length, tools }, results, requestBytes, await stateLine(tmp)));
  } finally {
    await stopAll();
  }
}

await main();

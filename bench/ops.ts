// npm run bench:ops — what one turn costs the platform, in the operations Cloudflare bills (issue 46): Durable Object
// requests (by class), D1 queries and the rows they read and wrote, KV reads and writes, rate limiter calls, queue
// messages, and requests to the upstream. Counted, not timed: the Worker runs under `wrangler dev` (as npm start runs
// it, in front of the scripted upstream) with the bench-only var APTIX_COUNT_OPS=1, which wraps its bindings at the
// Worker's entries and in each Durable Object's constructor (src/observability/op-counts.ts); the isolate's counts
// are read and reset through GET and DELETE /admin/bench/ops. Upstream requests are the scripted upstream's own count.
//
// For each door (`http`: POST /context/sessions/:id/messages answered as JSON; `sse`: the same with Accept:
// text/event-stream; `ws`: a user_message frame on the session's WebSocket; `openai`: the agent's door
// /agent/v1/chat/completions, continued by X-Aptix-Session) and turn shape (1 step: the model answers at once; 3
// steps: two calls of the hello tool, then an answer, as bench:peers scripts them), and for the passthrough
// (`passthrough-1`: POST /v1/chat/completions): a warm session (its object awake, its mode read: WARM_TURNS turns
// first), then the counts reset, TURNS turns one at a time, a wait until the work after the replies is done (the
// counts no longer move), and the counts divided by TURNS. Budgets are on: the org has a budget, so the meter is in
// play. The two Agents SDK peers of bench:peers (bench/peers/) are counted the same way for the doors they have (the
// plain Agent's HTTP turn, the AIChatAgent's WebSocket turn) and printed beside aptix's.
//
// `--json` prints only {"<door>-<steps>": {the nine counts}}, with the detail under "byClass" (Durable Object
// requests by class), "d1" (round trips, batches, writing round trips) and "d1Statements" (each statement's queries
// and rows), and the peers' under "peers". `--statements` adds the statements to the table's output; `--no-peers`
// leaves the peers out. BENCH_TURNS sets the turns counted (20).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptStep } from "../test/upstream/script-types.ts";
import { api } from "./support/bench-api.ts";
import { peerConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { type ScriptedUpstream, withScriptedWorker } from "./support/scripted-worker.ts";
import { fixed, table } from "./support/stats.ts";
import {
  auth,
  chatPeerDoor,
  type Door,
  FINAL_TEXT,
  httpDoor,
  openaiDoor,
  passthroughDoor,
  plainPeerDoor,
  sseDoor,
  wsDoor,
} from "./support/turn-doors.ts";

const UPSTREAM_KEY = "sk-bench-ops";
const TURNS = Number(process.env.BENCH_TURNS ?? 20);
const WARM_TURNS = 3;
/** The work after a reply (the list entry, the usage rows, the meter's settles) is awaited this long at least. */
const SETTLE_MS = 1_500;
/** Then the counts are read again this often until two reads agree. */
const POLL_MS = 500;
const JSON_OUT = process.argv.includes("--json");
const WITH_PEERS = !process.argv.includes("--no-peers");
/** Also print each door's D1 statements (the start of their SQL) with their queries and rows per turn. */
const STATEMENTS = process.argv.includes("--statements");

const COUNT_VARS = { APTIX_COUNT_OPS: "1" };
const GREETED = ["Dana", "Lee"];

/** The counts the isolate keeps (src/observability/op-counts.ts). */
interface IsolateCounts {
  doRequests: number;
  doRequestsByBinding: Record<string, number>;
  d1Queries: number;
  d1RoundTrips: number;
  d1Batches: number;
  d1WriteRoundTrips: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  d1ByStatement: Record<string, StatementCounts>;
  kvReads: number;
  kvWrites: number;
  kvLists: number;
  rateLimiterCalls: number;
  queueMessages: number;
}

interface StatementCounts {
  queries: number;
  rowsRead: number;
  rowsWritten: number;
}

/** The nine counts of the issue's JSON, per turn. */
interface PerTurn {
  doRequests: number;
  d1Queries: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  kvReads: number;
  kvWrites: number;
  rateLimiterCalls: number;
  queueMessages: number;
  upstreamRequests: number;
}

interface Measured {
  perTurn: PerTurn;
  byClass: Record<string, number>;
  d1: { roundTrips: number; batches: number; writeRoundTrips: number };
  /** D1's statements (the start of their SQL), per turn. */
  statements: Record<string, StatementCounts>;
}

/** The Durable Object classes by their bindings (wrangler.toml, bench/peers/*.wrangler.toml). */
const CLASS_OF: Record<string, string> = {
  AGENT_SESSION: "AgentSession",
  ORG_METER: "OrgMeter",
  SCHEDULE_RUNNER: "ScheduleRunner",
  PlainPeer: "PlainPeer",
  ChatPeer: "ChatPeer",
};

const progress = (message: string) => process.stderr.write(`bench:ops ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a worker's counts are read and reset: aptix's admin route, or a peer's /bench/ops. */
interface Counter {
  reset(): Promise<void>;
  read(): Promise<IsolateCounts>;
}

function counterAt(base: string, path: string): Counter {
  return {
    async reset() {
      const response = await fetch(`${base}${path}`, { method: "DELETE", headers: auth });
      if (response.status !== 204) throw new Error(`DELETE ${path} answered ${response.status}`);
    },
    async read() {
      const response = await fetch(`${base}${path}`, { headers: auth });
      if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { counts: IsolateCounts }).counts;
    },
  };
}

/** The counts once the work after the replies is done: after SETTLE_MS, read until two reads agree. */
async function settledCounts(counter: Counter): Promise<IsolateCounts> {
  await sleep(SETTLE_MS);
  let last = await counter.read();
  for (;;) {
    await sleep(POLL_MS);
    const next = await counter.read();
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
}

/** One turn's steps: the answer at once, or two hello tool calls and then the answer. */
function turnSteps(steps: 1 | 3): ScriptStep[] {
  const answer: ScriptStep = { type: "completion", content: FINAL_TEXT };
  if (steps === 1) return [answer];
  return [
    ...GREETED.map(
      (name): ScriptStep => ({
        type: "completion",
        content: null,
        toolCalls: [{ name: "agent_hello_world", arguments: JSON.stringify({ name }) }],
      }),
    ),
    answer,
  ];
}

/**
 * A warm conversation on `door`, then the counts of TURNS turns of `steps` steps per turn: the isolate's counts
 * through `counter`, the upstream requests by the script's own record.
 */
async function measure(door: Door, steps: 1 | 3, counter: Counter, upstream: ScriptedUpstream): Promise<Measured> {
  const all = Array.from({ length: WARM_TURNS + TURNS }, () => turnSteps(steps)).flat();
  const script = upstream.createScript(all);
  const conversation = await door.open();
  try {
    const say = (i: number) => `Say hello to ${GREETED.join(" and ")} (${i}). ${script.marker}`;
    for (let i = 0; i < WARM_TURNS; i++) await conversation.turn(say(i));
    await settledCounts(counter);
    await counter.reset();
    const before = upstream.requests(script.id).length;
    for (let i = 0; i < TURNS; i++) await conversation.turn(say(WARM_TURNS + i));
    const counts = await settledCounts(counter);
    const upstreamRequests = upstream.requests(script.id).length - before;
    const per = (n: number) => n / TURNS;
    const byClass = Object.fromEntries(
      Object.entries(counts.doRequestsByBinding).map(([binding, n]) => [CLASS_OF[binding] ?? binding, per(n)]),
    );
    return {
      perTurn: {
        doRequests: per(counts.doRequests),
        d1Queries: per(counts.d1Queries),
        d1RowsRead: per(counts.d1RowsRead),
        d1RowsWritten: per(counts.d1RowsWritten),
        kvReads: per(counts.kvReads),
        kvWrites: per(counts.kvWrites + counts.kvLists),
        rateLimiterCalls: per(counts.rateLimiterCalls),
        queueMessages: per(counts.queueMessages),
        upstreamRequests: per(upstreamRequests),
      },
      byClass,
      d1: {
        roundTrips: per(counts.d1RoundTrips),
        batches: per(counts.d1Batches),
        writeRoundTrips: per(counts.d1WriteRoundTrips),
      },
      statements: Object.fromEntries(
        Object.entries(counts.d1ByStatement).map(([sql, c]) => [
          sql,
          { queries: per(c.queries), rowsRead: per(c.rowsRead), rowsWritten: per(c.rowsWritten) },
        ]),
      ),
    };
  } finally {
    conversation.close();
  }
}

/**
 * Workers Paid prices, US dollars per million (https://developers.cloudflare.com/workers/platform/pricing/ and the
 * Durable Objects, D1, KV and Queues pricing pages): a Durable Object request (an incoming WebSocket message is
 * billed as 1/20 of one), a D1 row read and written, a KV read and write (a list is priced as a write), a queue
 * operation (a message is about three: written, read, deleted). The rate limiter has no published price.
 */
const PRICE = {
  doRequest: 0.15,
  wsMessageIn: 0.15 / 20,
  d1RowRead: 0.001,
  d1RowWritten: 1.0,
  kvRead: 0.5,
  kvWrite: 5.0,
  queueMessage: 3 * 0.4,
};

/** What a million turns cost in the operations counted, in US dollars; `wsIn`: the client's frames a turn. */
function dollarsPerMillion(t: PerTurn, wsIn: number): number {
  return (
    t.doRequests * PRICE.doRequest +
    wsIn * PRICE.wsMessageIn +
    t.d1RowsRead * PRICE.d1RowRead +
    t.d1RowsWritten * PRICE.d1RowWritten +
    t.kvReads * PRICE.kvRead +
    t.kvWrites * PRICE.kvWrite +
    t.queueMessages * PRICE.queueMessage
  );
}

const COLUMNS: [keyof PerTurn, string][] = [
  ["doRequests", "DO req"],
  ["d1Queries", "D1 queries"],
  ["d1RowsRead", "D1 rows read"],
  ["d1RowsWritten", "D1 rows written"],
  ["kvReads", "KV reads"],
  ["kvWrites", "KV writes"],
  ["rateLimiterCalls", "limiter"],
  ["queueMessages", "queue msgs"],
  ["upstreamRequests", "upstream"],
];

function report(results: Map<string, Measured>, title: string): string {
  const classes = [...new Set([...results.values()].flatMap((m) => Object.keys(m.byClass)))].sort();
  const rows = [...results].map(([row, m]) => [
    row,
    ...COLUMNS.map(([key]) => fixed(m.perTurn[key])),
    ...classes.map((c) => fixed(m.byClass[c] ?? 0)),
    fixed(m.d1.roundTrips),
    fixed(m.d1.writeRoundTrips),
    fixed(dollarsPerMillion(m.perTurn, row.startsWith("ws-") ? 1 : 0)),
  ]);
  return [
    title,
    table(
      [
        "door-steps",
        ...COLUMNS.map(([, label]) => label),
        ...classes.map((c) => `DO: ${c}`),
        "D1 round trips",
        "of them writing",
        "USD / 1M turns",
      ],
      rows,
    ),
  ].join("\n");
}

/** Each door's D1 statements, per turn: what its queries are. */
function statementReport(results: Map<string, Measured>): string {
  const rows = [...results].flatMap(([door, m]) =>
    Object.entries(m.statements)
      .sort(([, a], [, b]) => b.queries - a.queries)
      .map(([sql, c]) => [door, sql, fixed(c.queries), fixed(c.rowsRead), fixed(c.rowsWritten)]),
  );
  return [
    "aptix's D1 statements per turn",
    table(["door-steps", "statement", "queries", "rows read", "rows written"], rows),
  ].join("\n");
}

async function peerCounts(tmp: string, upstream: ScriptedUpstream): Promise<Map<string, Map<string, Measured>>> {
  const out = new Map<string, Map<string, Measured>>();
  const vars = {
    LLM_BASE_URL: `${upstream.url}/v1`,
    LLM_API_KEY: UPSTREAM_KEY,
    LLM_MODEL: "bench-model",
    ...COUNT_VARS,
  };
  const peers: [string, string, (base: string) => Door][] = [
    ["plain Agent", "plain-agent.wrangler.toml", plainPeerDoor],
    ["AIChatAgent", "chat-agent.wrangler.toml", chatPeerDoor],
  ];
  for (const [name, file, door] of peers) {
    progress(`starting the ${name} peer`);
    const worker: LocalWorker = await startLocalWorker({
      config: await peerConfig(tmp, file, "You are Aptix, a helpful AI agent."),
      vars,
      database: false,
    });
    try {
      const results = new Map<string, Measured>();
      for (const steps of [1, 3] as const) {
        const d = door(worker.url);
        progress(`${name}, ${d.name}-${steps}`);
        results.set(`${d.name}-${steps}`, await measure(d, steps, counterAt(worker.url, "/bench/ops"), upstream));
      }
      out.set(name, results);
    } finally {
      await worker.stop();
    }
  }
  return out;
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-ops-"));
  try {
    await withScriptedWorker(
      "ops",
      UPSTREAM_KEY,
      async (url, upstream) => {
        // Budgets on: the org has one (far from reached), so every model call is metered by its OrgMeter.
        await api(url, "PUT", "/admin/budget", {
          tokensPerDay: 1_000_000_000,
          tokensPerMonth: 10_000_000_000,
          costPerMonthUsd: 1_000_000,
        });
        const counter = counterAt(url, "/admin/bench/ops");
        const results = new Map<string, Measured>();
        for (const door of [httpDoor(url), sseDoor(url), wsDoor(url), openaiDoor(url)]) {
          for (const steps of [1, 3] as const) {
            progress(`${door.name}-${steps}`);
            results.set(`${door.name}-${steps}`, await measure(door, steps, counter, upstream));
          }
        }
        progress("passthrough-1");
        results.set("passthrough-1", await measure(passthroughDoor(url), 1, counter, upstream));
        // The Worker's route reads the counts of its own isolate. A turn's meter calls are the session object's
        // (budgets are on): seen here, the objects share the Worker's isolate, as wrangler dev runs them.
        if (!results.get("http-1")?.byClass.OrgMeter) {
          throw new Error("no OrgMeter request in http-1: the session object's counts are not in the Worker's isolate");
        }
        const peers = WITH_PEERS ? await peerCounts(tmp, upstream) : new Map<string, Map<string, Measured>>();
        if (JSON_OUT) {
          const json = (m: Map<string, Measured>) => Object.fromEntries([...m].map(([k, v]) => [k, v.perTurn]));
          const detail = (m: Map<string, Measured>, key: "byClass" | "d1" | "statements") =>
            Object.fromEntries([...m].map(([k, v]) => [k, v[key]]));
          console.log(
            JSON.stringify(
              {
                ...json(results),
                byClass: detail(results, "byClass"),
                d1: detail(results, "d1"),
                d1Statements: detail(results, "statements"),
                peers: Object.fromEntries([...peers].map(([name, m]) => [name, json(m)])),
              },
              null,
              2,
            ),
          );
          return;
        }
        console.log(
          [
            `Platform operations per turn (npm run bench:ops, wrangler dev, ${new Date().toISOString().slice(0, 10)}):`,
            `a warm session's ${TURNS} turns after ${WARM_TURNS}, budgets on, counts once the work after the replies is done.`,
            "",
            report(results, "aptix"),
            ...[...peers].flatMap(([name, m]) => ["", report(m, name)]),
            ...(STATEMENTS ? ["", statementReport(results)] : []),
          ].join("\n"),
        );
      },
      COUNT_VARS,
    );
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

await main();

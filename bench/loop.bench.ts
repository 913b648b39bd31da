// npm run bench:loop — the agent loop's own cost, inside the Workers runtime (vitest bench mode, workerd), through
// real AgentSession objects whose model is the scripted upstream answering at once. The figures that matter are the
// ratios to baselines measured in the same run: a bare D1 query, a bare Durable Object RPC and a bare model call.
import { env } from "cloudflare:workers";
import { afterAll, bench, describe } from "vitest";
import type { ChatRequest } from "../src/llm/chat-model";
import { OpenAIChatModel } from "../src/llm/openai-chat-model";
import { D1AgentModeCatalogService } from "../src/modes/catalog-service";
import { JsonAdminLogger } from "../src/observability/admin-logger";
import { enhanceSystemPrompt } from "../src/prompts/system-prompt-enhancer";
import type { AgentSession } from "../src/session/agent-session";
import { sessionBasePrompt } from "../src/session/session-model";
import { createAgentToolRegistry } from "../src/tools";
import type { CreatedScript, ScriptOptions, ScriptStep } from "../test/upstream/script-types";
import { fixed, ratio, type Summary, summarize, table } from "./support/stats.ts";

const CALLER = { org: "bench-org", user: "bench-user", keyId: "bench-key" };
const CONCURRENT_SESSIONS = 1000;
/** A "3-step turn": three model calls, two of them asking for a tool and the last one answering. */
const STEPS_TOOL_ITERATIONS = 2;

type SessionStub = DurableObjectStub<AgentSession>;
interface PreparedTurn {
  stub: SessionStub;
  content: string;
}

/** Our own samples (ms) by operation, the wall time of each concurrent batch, and the rounds being measured. */
const samples = new Map<string, number[]>();
const batchWalls: number[] = [];
/** Concurrent turns started, and those whose session afterwards holds the final answer (idle, answer stored). */
const concurrentTally = { started: 0, completed: 0 };
const measuring = new Set<string>();

function record(name: string, ms: number): void {
  const list = samples.get(name) ?? [];
  list.push(ms);
  samples.set(name, list);
}

async function createScript(steps: ScriptStep[], options: ScriptOptions = {}): Promise<string> {
  const response = await fetch(`${env.TEST_UPSTREAM_URL}/__scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps, record: false, ...options }),
  });
  if (response.status !== 201) throw new Error(`the scripted upstream refused a script: ${await response.text()}`);
  return ((await response.json()) as CreatedScript).marker;
}

async function createSession(): Promise<SessionStub> {
  const id = env.AGENT_SESSION.newUniqueId();
  const stub = env.AGENT_SESSION.get(id);
  await stub.initialize({ sessionId: id.toString(), ...CALLER, mode: "general", parentSessionId: null });
  return stub;
}

/** `toolIterations` model answers asking for agent_hello_world, then a final answer. */
function turnSteps(toolIterations: number): ScriptStep[] {
  const call = { name: "agent_hello_world", arguments: JSON.stringify({ name: "Dana" }) };
  return [
    ...Array.from({ length: toolIterations }, (): ScriptStep => ({ type: "completion", toolCalls: [call] })),
    { type: "completion", content: "Greeted Dana." },
  ];
}

/** `count` fresh sessions, each with a script of its own, made before the clock runs. */
async function prepareTurns(count: number, toolIterations: number): Promise<PreparedTurn[]> {
  const turns: PreparedTurn[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, async () => {
      const [stub, marker] = await Promise.all([createSession(), createScript(turnSteps(toolIterations))]);
      return { stub, content: `Say hello to Dana ${marker}` };
    });
    turns.push(...(await Promise.all(batch)));
  }
  return turns;
}

/** The request of a turn's first iteration in the general mode, whose model answers with one hello tool call. */
async function iterationSizedRequest(): Promise<ChatRequest> {
  const catalog = new D1AgentModeCatalogService(env.DB, null);
  const logger = new JsonAdminLogger({}, () => {});
  const registry = createAgentToolRegistry({
    logger,
    catalog,
    sessionManager: { setSessionMode: async () => {} },
  });
  const enhanced = enhanceSystemPrompt({
    basePrompt: await sessionBasePrompt(env.DB),
    mode: await catalog.getDefaultMode(),
    registeredTools: registry.tools,
    format: "native",
    budgetTokens: 6_000,
  });
  const marker = await createScript(turnSteps(1).slice(0, 1), { repeat: true });
  return {
    messages: [
      { role: "system", content: enhanced.prompt },
      { role: "user", content: `Say hello to Dana ${marker}` },
    ],
    tools: enhanced.tools.map((tool) => {
      const schema = tool.getSchema();
      return {
        type: "function" as const,
        function: { name: schema.name, description: schema.description, parameters: schema.parameters },
      };
    }),
    onTextDelta: () => {},
  };
}

async function runTurn(turn: PreparedTurn, toolIterations: number): Promise<void> {
  const outcome = await turn.stub.sendMessage(CALLER, turn.content);
  if (!outcome.ok) throw new Error(`the turn was refused: ${outcome.message}`);
  const { status, iterations } = outcome.value;
  if (status !== "completed" || iterations !== toolIterations + 1) {
    throw new Error(
      `unexpected turn: ${status} after ${iterations} model calls (${JSON.stringify(outcome.value.error)})`,
    );
  }
}

/** Runs `op` and records how long it took under `name`. */
async function timed(name: string, op: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await op();
  const ms = performance.now() - started;
  record(name, ms);
  return ms;
}

/**
 * A benchmark whose every sample is one round of interleaved operations, so a change in the machine's load
 * (2 cores, shared) falls on the baselines and on the turns alike. tinybench times the whole round, set-up
 * included; the ratio tables printed at the end time each operation.
 */
function rounds(name: string, count: number, warmup: number, round: () => Promise<void>): void {
  bench(name, round, {
    time: 0,
    iterations: count,
    warmupTime: 0,
    warmupIterations: warmup,
    setup: (_task, mode) => {
      if (mode === "run") measuring.add(name);
      else measuring.delete(name);
    },
  });
}

const D1 = "baseline: D1 query (SELECT 1)";
const RPC = "baseline: Durable Object RPC (getSession of an empty session)";
/**
 * The same RPC when the object writes one row first (issueTicket): a Durable Object holds every answer and
 * outgoing request until its writes are stored (its output gate), so the difference is what one iteration's
 * wait for its writes costs before the next model call goes out.
 */
const RPC_WRITE = "baseline: Durable Object RPC that writes one row (issueTicket)";
const MODEL = "baseline: model call (one streamed completion from the scripted upstream)";
/**
 * The loop takes one unit of the key's model call budget before every model call (MODEL_CALL_LIMITER). Under
 * workerd that is the local simulator (a Durable Object writing SQLite); on Cloudflare it is the platform's
 * in-location counter. It is measured here so the loop's own cost can be read without the simulator's.
 */
const LIMIT = "baseline: one MODEL_CALL_LIMITER.limit() call (the local simulator)";
/**
 * A model call the size and shape of a loop iteration's: the enhanced prompt of the session's mode, its tools,
 * the user's message, and a tool call streamed back in fragments (the bare model call above is a tiny request
 * with a one-word answer). The loop's own cost is the slope less this call and one limit() call.
 */
const MODEL_ITERATION = "baseline: model call the size of an iteration's (enhanced prompt, tools, a tool call back)";
const TURN = (k: number) =>
  `${k + 1}-iteration turn (${k} tool call${k === 1 ? "" : "s"}, then the answer; ${k + 1} model calls)`;
const ALONE = "3-step turn, one session alone";
const CONCURRENT_TURN = `3-step turn, ${CONCURRENT_SESSIONS} sessions at once`;
const LOOP_ROUNDS =
  "per-iteration cost: one round (25 each of D1, 2 RPCs, 2 model calls, limit(); 4 turns each of 2, 6 and 10 loop iterations)";
/**
 * Tool-call iterations per measured turn; each turn ends with one more iteration, the answer. The longest is the
 * 10-iteration loop that AGENT_MAX_ITERATIONS (10) allows, and the per-iteration cost is the slope up to it.
 */
const TURN_SIZES = [1, 5, 9] as const;
const LONGEST = 9;
const CONCURRENT_ROUNDS = `concurrency: one round (10 turns alone, then ${CONCURRENT_SESSIONS} at once)`;

describe("agent loop", () => {
  let idle: SessionStub | null = null;
  let modelMarker = "";
  const model = new OpenAIChatModel({
    baseUrl: env.LLM_BASE_URL,
    apiKey: env.LLM_API_KEY ?? "",
    model: "scripted-model",
    callTimeoutMs: 30_000,
  });
  const measure = (name: string, op: () => Promise<unknown>) => (measuring.has(LOOP_ROUNDS) ? timed(name, op) : op());

  let iterationRequest: ChatRequest | null = null;
  rounds(LOOP_ROUNDS, 12, 2, async () => {
    iterationRequest ??= await iterationSizedRequest();
    const sized = iterationRequest;
    idle ??= await createSession();
    const stub = idle;
    modelMarker ||= await createScript([{ type: "completion", content: "Done." }], { repeat: true });
    for (let i = 0; i < 25; i++) await measure(D1, () => env.DB.prepare("SELECT 1").first());
    for (let i = 0; i < 25; i++) {
      await measure(RPC, async () => {
        const view = await stub.getSession(CALLER);
        if (!view.ok) throw new Error(view.message);
      });
    }
    for (let i = 0; i < 25; i++) {
      await measure(MODEL, () =>
        model.complete({ messages: [{ role: "user", content: `hi ${modelMarker}` }], onTextDelta: () => {} }),
      );
    }
    for (let i = 0; i < 25; i++) {
      await measure(RPC_WRITE, async () => {
        const ticket = await stub.issueTicket(CALLER);
        if (!ticket.ok) throw new Error(ticket.message);
      });
    }
    for (let i = 0; i < 25; i++) await measure(LIMIT, () => env.MODEL_CALL_LIMITER.limit({ key: "bench-baseline" }));
    for (let i = 0; i < 25; i++) await measure(MODEL_ITERATION, () => model.complete(sized));
    for (const k of TURN_SIZES) {
      for (const turn of await prepareTurns(4, k)) await measure(TURN(k), () => runTurn(turn, k));
    }
  });

  rounds(CONCURRENT_ROUNDS, 4, 1, async () => {
    const on = measuring.has(CONCURRENT_ROUNDS);
    for (const turn of await prepareTurns(10, STEPS_TOOL_ITERATIONS)) {
      await (on ? timed(ALONE, () => runTurn(turn, STEPS_TOOL_ITERATIONS)) : runTurn(turn, STEPS_TOOL_ITERATIONS));
    }
    const batch = await prepareTurns(CONCURRENT_SESSIONS, STEPS_TOOL_ITERATIONS);
    const started = performance.now();
    const latencies = await Promise.all(
      batch.map(async (turn) => {
        await runTurn(turn, STEPS_TOOL_ITERATIONS);
        return performance.now() - started;
      }),
    );
    if (!on) return;
    batchWalls.push(performance.now() - started);
    concurrentTally.started += batch.length;
    const stored = await Promise.all(
      batch.map(async ({ stub }) => {
        const view = await stub.getSession(CALLER);
        if (!view.ok) return false;
        const last = view.value.conversation.at(-1);
        return view.value.status === "idle" && last?.role === "assistant" && last.content === "Greeted Dana.";
      }),
    );
    concurrentTally.completed += stored.filter(Boolean).length;
    samples.set(CONCURRENT_TURN, [...(samples.get(CONCURRENT_TURN) ?? []), ...latencies]);
  });
});

afterAll(() => {
  const get = (name: string): Summary => summarize(samples.get(name) ?? []);
  const d1 = get(D1);
  const rpc = get(RPC);
  const model = get(MODEL);
  const limit = get(LIMIT);
  const sizedModel = get(MODEL_ITERATION);
  const rpcWrite = get(RPC_WRITE);
  const turns = new Map(TURN_SIZES.map((k) => [k, get(TURN(k))]));
  const perIteration = ((turns.get(LONGEST)?.mean ?? Number.NaN) - (turns.get(1)?.mean ?? Number.NaN)) / (LONGEST - 1);
  const row = (name: string, mean: number, s?: Summary) => [
    name,
    fixed(mean),
    s ? fixed(s.p50, 0) : "",
    s ? fixed(s.p99, 0) : "",
    s ? String(s.count) : "",
    ratio(mean, d1.mean),
    ratio(mean, rpc.mean),
    ratio(mean, model.mean),
  ];
  const loopTable = table(
    ["measurement", "mean ms", "p50 ms", "p99 ms", "samples", "÷ D1 query", "÷ DO RPC", "÷ model call"],
    [
      row(D1, d1.mean, d1),
      row(RPC, rpc.mean, rpc),
      row(RPC_WRITE, rpcWrite.mean, rpcWrite),
      row(MODEL, model.mean, model),
      row(MODEL_ITERATION, sizedModel.mean, sizedModel),
      row(LIMIT, limit.mean, limit),
      ...TURN_SIZES.map((k) => {
        const s = turns.get(k);
        return row(TURN(k), s?.mean ?? Number.NaN, s);
      }),
      row(`per loop iteration: (${LONGEST + 1}-iteration turn − 2-iteration turn) ÷ ${LONGEST - 1}`, perIteration),
      row("per loop iteration, less one bare model call", perIteration - model.mean),
      row("per loop iteration, less one bare model call and one limit() call", perIteration - model.mean - limit.mean),
      row(
        "per loop iteration, less an iteration-sized model call and one limit() call (the loop's own cost)",
        perIteration - sizedModel.mean - limit.mean,
      ),
    ],
  );

  const alone = get(ALONE);
  const together = get(CONCURRENT_TURN);
  const wall = summarize(batchWalls);
  const aloneRate = 1000 / alone.mean;
  const togetherRate = (CONCURRENT_SESSIONS * 1000) / wall.mean;
  const concurrencyTable = table(
    ["3-step turns", "turns", "p50 ms", "p99 ms", "turns/s", "p50 ratio", "p99 ratio", "turns/s ratio"],
    [
      [
        ALONE,
        String(alone.count),
        fixed(alone.p50, 0),
        fixed(alone.p99, 0),
        fixed(aloneRate, 1),
        "1.00x",
        "1.00x",
        "1.00x",
      ],
      [
        `${CONCURRENT_SESSIONS} sessions at once (${wall.count} batches)`,
        String(together.count),
        fixed(together.p50, 0),
        fixed(together.p99, 0),
        fixed(togetherRate, 1),
        ratio(together.p50, alone.p50),
        ratio(together.p99, alone.p99),
        ratio(togetherRate, aloneRate),
      ],
    ],
  );

  console.log(
    [
      "",
      `Agent loop benchmark (workerd under vitest, ${new Date().toISOString().slice(0, 10)}). The runtime's clock`,
      "moves in whole milliseconds at I/O, so single samples are 0, 1, 2 ms...; means over many samples are finer.",
      "",
      loopTable,
      "",
      concurrencyTable,
      "",
      `${CONCURRENT_SESSIONS} sessions at once: ${concurrentTally.started} turns started, ${concurrentTally.completed} completed ` +
        `with their answer stored, ${concurrentTally.started - concurrentTally.completed} lost; ` +
        `wall time per batch ${fixed(wall.mean, 0)} ms (p50 ${fixed(wall.p50, 0)} ms).`,
      "",
    ].join("\n"),
  );
});

// npm run bench:cache — what prompt caching saves a long agent session, in tokens and in budget cost. Two sessions
// of 20 tool-using turns each (every turn: a tool call, its result, then the answer: two model calls) through the
// real API (POST /context/sessions/:id/messages) on one Worker under `wrangler dev`, each in a mode on an anthropic
// route to the scripted Anthropic upstream, which caches prompts as Anthropic documents it
// (test/upstream/anthropic-prompt-cache.ts). The routes differ only in `promptCaching`: on (cache_control
// breakpoints) and off. Reported:
//   - the share of input tokens read from the cache, after the first turn (goal: at least 80%) and over all turns;
//   - the budget cost of each session from the route's prices (Claude Sonnet-like: US$ 3 per million input tokens,
//     0.30 cached, 3.75 cache writes, 15 output), read from /admin/usage, and caching's cost against none.
// Tokens, not time: the machine's load does not change the figures.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnthropicScriptStep } from "../test/upstream/script-types.ts";
import { startScriptedAnthropic } from "../test/upstream/scripted-anthropic.ts";
import { api } from "./support/bench-api.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, table } from "./support/stats.ts";

const ANTHROPIC_KEY = "sk-ant-bench-cache";
const TURNS = Number(process.env.BENCH_TURNS ?? 20);
const GOAL_SHARE = 0.8;
const PRICES = {
  inputPricePerMTok: 3,
  cachedInputPricePerMTok: 0.3,
  cacheWritePricePerMTok: 3.75,
  outputPricePerMTok: 15,
};
/** A mode prompt of the length real ones have (some 2,000 tokens with the base prompt and the tools). */
const MODE_PROMPT =
  "You are a careful engineering assistant. Read before you write, say what you changed and why, and keep answers short. ".repeat(
    50,
  );
/** About 60 tokens a user message. */
const FILLER = "Please look at the next part of the project and tell me what you find there. ".repeat(3);

interface TurnUsage {
  promptTokens: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/** Every turn: the model calls the hello tool, then answers. */
function turnSteps(): AnthropicScriptStep[] {
  return Array.from({ length: TURNS }, (_, n) => [
    {
      type: "message" as const,
      content: [{ type: "tool_use" as const, name: "agent_hello_world", input: { name: `Dana ${n}` } }],
    },
    {
      type: "message" as const,
      content: [{ type: "text" as const, text: `Turn ${n + 1}: greeted Dana; all is well.` }],
    },
  ]).flat();
}

interface SessionRun {
  route: string;
  turns: TurnUsage[];
}

async function runSession(url: string, route: string, marker: string): Promise<SessionRun> {
  const mode = `bench-${route}`;
  await api(url, "PUT", `/admin/modes/${mode}`, {
    displayName: `Cache bench (${route})`,
    description: "The prompt cache benchmark's mode.",
    systemPrompt: MODE_PROMPT,
    tools: ["agent_hello_world"],
    modelRoute: route,
  });
  const sessionId = String((await api(url, "POST", "/context/sessions", { mode })).sessionId);
  const turns: TurnUsage[] = [];
  for (let n = 1; n <= TURNS; n++) {
    const answer = await api(url, "POST", `/context/sessions/${sessionId}/messages`, {
      content: `Turn ${n}. ${FILLER} ${marker}`,
    });
    if (answer.status !== "completed") throw new Error(`turn ${n} ended ${String(answer.status)}`);
    turns.push(answer.usage as TurnUsage);
  }
  return { route, turns };
}

interface RouteUsage {
  group: string;
  calls: number;
  promptTokens: number;
  cachedInputTokens: number;
  cacheWriteInputTokens: number;
  costUsd: number;
}

/** The routes' rows of /admin/usage today, once every call's row is written (the session object writes them after its reply). */
async function routeUsage(url: string, calls: number): Promise<Map<string, RouteUsage>> {
  const today = new Date().toISOString().slice(0, 10);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = (await api(url, "GET", `/admin/usage?groupBy=route&from=${today}&to=${today}`)) as unknown as {
      rows: RouteUsage[];
    };
    const byRoute = new Map(rows.map((r) => [r.group, r]));
    const written = ["bench_cached", "bench_uncached"].every((name) => (byRoute.get(name)?.calls ?? 0) >= calls);
    if (written || Date.now() > deadline) return byRoute;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const sum = (turns: readonly TurnUsage[], pick: (t: TurnUsage) => number) => turns.reduce((s, t) => s + pick(t), 0);
const share = (turns: readonly TurnUsage[]) =>
  sum(turns, (t) => t.cachedInputTokens ?? 0) /
  Math.max(
    1,
    sum(turns, (t) => t.promptTokens),
  );
const percent = (value: number) => `${fixed(value * 100, 1)}%`;

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-cache-"));
  const anthropic = await startScriptedAnthropic({ apiKey: ANTHROPIC_KEY });
  let worker: LocalWorker | null = null;
  const stopAll = async () => {
    await worker?.stop();
    await anthropic.close();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    console.log(
      "Starting the Worker (wrangler dev, as npm start runs it) in front of the scripted Anthropic upstream ...",
    );
    worker = await startLocalWorker({
      config: await benchConfig(tmp, true),
      vars: { BENCH_ANTHROPIC_KEY: ANTHROPIC_KEY },
    });
    const url = worker.url;
    const route = (promptCaching: boolean) => ({
      provider: "anthropic",
      model: "claude-bench",
      baseUrl: anthropic.url,
      apiKeySecret: "BENCH_ANTHROPIC_KEY",
      promptCaching,
      ...PRICES,
    });
    await api(url, "PUT", "/admin/model-routes/bench_cached", route(true));
    await api(url, "PUT", "/admin/model-routes/bench_uncached", route(false));
    const runs: SessionRun[] = [];
    for (const name of ["bench_cached", "bench_uncached"]) {
      const script = anthropic.createScript(turnSteps(), { record: false });
      console.log(`  ${TURNS} turns on ${name} ...`);
      runs.push(await runSession(url, name, script.marker));
    }
    const usage = await routeUsage(url, TURNS * 2);
    const [cached, uncached] = runs;
    if (!cached || !uncached) throw new Error("a session did not run");
    const after = cached.turns.slice(1);
    const costOf = (name: string) => usage.get(name)?.costUsd ?? Number.NaN;
    const rows = [
      ["input read from the cache, turns 2 to 20", percent(share(after)), `≥ ${percent(GOAL_SHARE)}`],
      ["input read from the cache, all turns", percent(share(cached.turns)), ""],
      [
        "input written to the cache, all turns",
        percent(
          sum(cached.turns, (t) => t.cacheWriteInputTokens ?? 0) /
            Math.max(
              1,
              sum(cached.turns, (t) => t.promptTokens),
            ),
        ),
        "",
      ],
      [
        "input tokens, caching on (off)",
        `${sum(cached.turns, (t) => t.promptTokens)} (${sum(uncached.turns, (t) => t.promptTokens)})`,
        "",
      ],
      ["budget cost, caching off (baseline), US$", fixed(costOf("bench_uncached"), 4), ""],
      ["budget cost, caching on, US$", fixed(costOf("bench_cached"), 4), ""],
      ["caching on ÷ off", `${fixed(costOf("bench_cached") / costOf("bench_uncached"))}x`, "< 1x"],
    ];
    console.log(
      [
        "",
        `Prompt cache benchmark: two sessions of ${TURNS} tool-using turns (${TURNS * 2} model calls each) on anthropic routes to the`,
        "scripted Anthropic upstream, one with promptCaching on and one off; costs from /admin/usage at the routes' prices.",
        "",
        table(["", "value", "goal"], rows),
      ].join("\n"),
    );
    if (share(after) < GOAL_SHARE) process.exitCode = 1;
  } finally {
    await stopAll();
  }
}

await main();

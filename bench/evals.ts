// npm run bench:evals: eval throughput, cases a minute against the offline demo model (one local Worker under
// wrangler dev, as `npm start` runs it). The baseline, in the same run: the same cases' turns sent plainly (a session,
// its messages, its deletion, nothing checked), so the ratio is what the runner adds (the mode read, the eval header,
// parsing, expectations) over the turns themselves. Rounds of the two take turns, so a shared machine's load falls
// on both alike. Then the same dataset four cases at a time, for the absolute rate a CI run gets.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type EvalCase, parseDataset } from "../src/evals/dataset.ts";
import { runEval } from "../src/evals/runner.ts";
import { api } from "./support/bench-api.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

const KEY = "dev-key";
const MODE = "general";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const WARMUP_ROUNDS = 1;

const now = () => performance.timeOrigin + performance.now();

/** The baseline: each case's turns, plainly. */
async function plainRound(url: string, cases: readonly EvalCase[]): Promise<number> {
  const started = now();
  for (const item of cases) {
    const sessionId = String((await api(url, "POST", "/context/sessions", { mode: MODE })).sessionId);
    for (const message of item.messages) {
      await api(url, "POST", `/context/sessions/${sessionId}/messages`, { content: message.content });
    }
    await api(url, "DELETE", `/context/sessions/${sessionId}`);
  }
  return now() - started;
}

async function runnerRound(url: string, cases: readonly EvalCase[], concurrency: number): Promise<number> {
  const started = now();
  const results = await runEval({ mode: MODE, cases, target: { baseUrl: url, key: KEY }, concurrency });
  if (results.failed > 0)
    throw new Error(`the dataset failed: ${JSON.stringify(results.cases.filter((c) => !c.passed))}`);
  return now() - started;
}

const perMinute = (cases: number, ms: number) => (cases / ms) * 60_000;

async function main() {
  const dataset = parseDataset(await readFile(`evals/${MODE}.jsonl`, "utf8"));
  if (!dataset.ok) throw new Error(dataset.message);
  const { cases } = dataset;
  const dir = await mkdtemp(join(tmpdir(), "aptix-bench-evals-"));
  let worker: LocalWorker | null = null;
  try {
    worker = await startLocalWorker({ config: await benchConfig(dir, true), localObservability: false });
    const plain: number[] = [];
    const runner: number[] = [];
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      // Which side goes first alternates, so neither always gets the warmer Worker.
      const sides = round % 2 === 0 ? ["plain", "runner"] : ["runner", "plain"];
      for (const side of sides) {
        const ms = side === "plain" ? await plainRound(worker.url, cases) : await runnerRound(worker.url, cases, 1);
        if (round >= WARMUP_ROUNDS) (side === "plain" ? plain : runner).push(ms);
      }
    }
    const parallel: number[] = [];
    for (let round = 0; round < Math.max(2, ROUNDS / 2); round++)
      parallel.push(await runnerRound(worker.url, cases, 4));
    const plainMs = percentile(plain, 50);
    const runnerMs = percentile(runner, 50);
    const parallelMs = percentile(parallel, 50);
    const rows = [
      ["the same turns sent plainly (baseline), cases a minute", fixed(perMinute(cases.length, plainMs)), "1.00x"],
      ["the eval runner, one case at a time, cases a minute", fixed(perMinute(cases.length, runnerMs)), ""],
      ["**runner time ÷ plain time** (median round)", "", `**${fixed(runnerMs / plainMs)}x**`],
      ["the eval runner, four cases at a time, cases a minute", fixed(perMinute(cases.length, parallelMs)), ""],
    ];
    console.log(
      `\nbench:evals: ${cases.length} cases of evals/${MODE}.jsonl a round, ${ROUNDS} rounds a side (median round); ` +
        `${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)}\n`,
    );
    console.log("| eval throughput | value | ratio |\n| --- | ---: | ---: |");
    for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  } finally {
    await worker?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

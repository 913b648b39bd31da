// `npm run eval`'s work, apart from its process (scripts/eval.ts), so a test drives it with its own fetch and output:
// reads the dataset, runs it against an aptix (`--url`/`--key`, or a local Worker started as `npm start` starts it,
// with the demo model and dev-key), prints a table per version and the pass rates side by side, writes `--out`, and
// answers the exit code: 0, 1 under `--min-pass`, 2 for bad usage, a bad dataset or a run that could not start.
import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { parseDataset } from "../src/evals/dataset.ts";
import type { Fetch } from "../src/evals/eval-http.ts";
import { type CaseResult, type EvalResults, EvalSetupError, runEval } from "../src/evals/runner.ts";

export const USAGE =
  "Usage: npm run eval -- --mode <key> [--version <n>] [--compare <n>] [--url <base> --key <key>] " +
  "[--min-pass <0..1>] [--out <results.json>] <dataset.jsonl>";

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  fetch?: Fetch;
  /** Starts the local Worker when no `--url` is given (scripts/eval.ts passes bench/support/local-worker.ts's). */
  startLocal?: () => Promise<{ url: string; key: string; stop: () => Promise<void> }>;
}

interface CliOptions {
  mode: string;
  version?: number;
  compare?: number;
  url?: string;
  key?: string;
  minPass?: number;
  out?: string;
  dataset: string;
}

class UsageError extends Error {}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a version number (1, 2, ...), not "${value}"`);
  return n;
}

export function parseCliArgs(argv: string[]): CliOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (!values.mode) throw new UsageError("--mode is required");
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError("name one dataset file (JSONL)");
  if (Boolean(values.url) !== Boolean(values.key)) throw new UsageError("--url and --key go together");
  let minPass: number | undefined;
  if (values["min-pass"] !== undefined) {
    minPass = Number(values["min-pass"]);
    if (!Number.isFinite(minPass) || minPass < 0 || minPass > 1) {
      throw new UsageError(`--min-pass must be a rate from 0 to 1, not "${values["min-pass"]}"`);
    }
  }
  const version = positiveInt("version", values.version);
  const compare = positiveInt("compare", values.compare);
  return {
    mode: values.mode,
    dataset: positionals[0],
    ...(version === undefined ? {} : { version }),
    ...(compare === undefined ? {} : { compare }),
    ...(values.url ? { url: values.url } : {}),
    ...(values.key ? { key: values.key } : {}),
    ...(minPass === undefined ? {} : { minPass }),
    ...(values.out ? { out: values.out } : {}),
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      mode: { type: "string" },
      version: { type: "string" },
      compare: { type: "string" },
      url: { type: "string" },
      key: { type: "string" },
      "min-pass": { type: "string" },
      out: { type: "string" },
    },
  });
}

/** The exit code of one `npm run eval`. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliArgs(argv);
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  let text: string;
  try {
    text = await readFile(options.dataset, "utf8");
  } catch {
    io.err(`${options.dataset}: the dataset could not be read`);
    return 2;
  }
  const dataset = parseDataset(text);
  if (!dataset.ok) {
    io.err(`${options.dataset}: ${dataset.message}`);
    return 2;
  }
  const local = options.url ? null : await io.startLocal?.();
  const url = options.url ?? local?.url;
  const key = options.key ?? local?.key;
  if (!url || !key) {
    io.err(`No aptix to run against: give --url and --key.\n${USAGE}`);
    return 2;
  }
  const target = { baseUrl: url, key, ...(io.fetch ? { fetch: io.fetch } : {}) };
  const versions = options.compare === undefined ? [options.version] : [options.version, options.compare];
  const results: EvalResults[] = [];
  try {
    for (const version of versions) {
      results.push(
        await runEval({
          mode: options.mode,
          ...(version === undefined ? {} : { version }),
          cases: dataset.cases,
          target,
        }),
      );
    }
  } catch (error) {
    if (!(error instanceof EvalSetupError)) throw error;
    io.err(error.message);
    return 2;
  } finally {
    await local?.stop();
  }
  for (const result of results) io.out(caseTable(result));
  io.out(rateTable(results));
  if (options.out) {
    await writeFile(options.out, `${JSON.stringify(results.length === 1 ? results[0] : results, null, 2)}\n`);
  }
  const gated = results[0];
  if (options.minPass !== undefined && gated && gated.passRate < options.minPass) {
    io.err(`The pass rate ${percent(gated.passRate)} is under --min-pass ${percent(options.minPass)}.`);
    return 1;
  }
  return 0;
}

const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
const versionName = (r: EvalResults) => (r.version === null ? "current" : `v${r.version}`);

function table(header: string[], rows: string[][]): string {
  const cells = (row: string[]) => `| ${row.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [cells(header), cells(header.map(() => "---")), ...rows.map(cells)].join("\n");
}

/** One version's cases: a Markdown table (it reads in a terminal and pastes into a pull request). */
export function caseTable(result: EvalResults): string {
  const rows = result.cases.map((c: CaseResult) => [
    c.name,
    c.passed ? "pass" : "FAIL",
    c.failures[0] ?? "",
    String(c.steps),
    String(c.tokens),
    String(c.ms),
  ]);
  return `\n${result.mode} ${versionName(result)}\n${table(["case", "result", "failing expectation", "steps", "tokens", "ms"], rows)}`;
}

/** The pass rate of each version, side by side. */
export function rateTable(results: EvalResults[]): string {
  const header = ["", ...results.map(versionName)];
  const rows = [
    ["passed", ...results.map((r) => `${r.passed}/${r.passed + r.failed}`)],
    ["pass rate", ...results.map((r) => percent(r.passRate))],
  ];
  return `\n${table(header, rows)}`;
}

// npm run eval -- --mode <key> [--version <n>] [--compare <n>] [--url <base> --key <key>] [--min-pass <0..1>]
//   [--out <results.json>] <dataset.jsonl>
// Runs a dataset's cases through the real turn path (docs/evals.md). Without --url it starts the local Worker as
// `npm start` does (the offline demo model unless LLM_BASE_URL says otherwise, and the seeded dev-key).
import { startLocalWorker } from "../bench/support/local-worker.ts";
import { runCli } from "./eval-cli.ts";

/** The operator key seeds/local.sql stores for the local Worker (org dev-org). */
const DEV_KEY = "dev-key";

const code = await runCli(process.argv.slice(2), {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  startLocal: async () => {
    console.error("Starting the local Worker (as npm start does)...");
    const worker = await startLocalWorker({ localObservability: false });
    return { url: worker.url, key: DEV_KEY, stop: () => worker.stop() };
  },
});
process.exit(code);

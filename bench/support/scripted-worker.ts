// A benchmark's Worker under `wrangler dev` (as npm start runs it) in front of the scripted OpenAI-compatible
// upstream (LLM_BASE_URL points at it), in a throw-away folder: both started, handed to the benchmark, and stopped
// after it (or on Ctrl-C).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../../test/upstream/scripted-upstream.ts";
import { benchConfig } from "./bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./local-worker.ts";

export type ScriptedUpstream = Awaited<ReturnType<typeof startScriptedUpstream>>;

/**
 * Runs `work` with the Worker's URL and the upstream (whose key is `upstreamKey`); stops both after it. `vars` are
 * the Worker's own more (bench:ops's APTIX_COUNT_OPS).
 */
export async function withScriptedWorker(
  name: string,
  upstreamKey: string,
  work: (url: string, upstream: ScriptedUpstream) => Promise<void>,
  vars: Record<string, string> = {},
): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), `aptix-bench-${name}-`));
  const upstream = await startScriptedUpstream({ apiKey: upstreamKey });
  let worker: LocalWorker | null = null;
  const stopAll = async () => {
    await worker?.stop();
    await upstream.close();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    // On stderr, as progress: stdout is the report (bench:ops --json prints JSON alone).
    console.error("Starting the Worker (wrangler dev, as npm start runs it) in front of the scripted upstream ...");
    worker = await startLocalWorker({
      config: await benchConfig(tmp, true),
      vars: { LLM_BASE_URL: `${upstream.url}/v1`, LLM_API_KEY: upstreamKey, ...vars },
    });
    await work(worker.url, upstream);
  } finally {
    await stopAll();
  }
}

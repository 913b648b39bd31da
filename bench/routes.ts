// npm run bench:routes — what model routes cost a model call, from one Worker under `wrangler dev` in front of
// scripted upstreams, in the same run. Five ways of sending the same non-streamed chat completion, one request at
// a time, taking turns so all see the same load:
//   direct            `model` names no route: `default`, the body forwarded byte for byte (the path before routes);
//   routed            `model` names a deployment route to the same upstream: the route looked up (the isolate's copy
//                     of the org's table), the body's `model` rewritten, the route's key (a Worker secret) and headers;
//   org route         `model` names the caller's org's own route to the same upstream, its key one of the org's
//                     secrets (sealed in D1, opened when the org's table is read, kept with it);
//   failover (503)    a route whose upstream answers 503 at once, falling back to the routed one;
//   failover (refused) a route whose upstream refuses the connection, falling back to the routed one.
// The cost of routing is routed / direct (goal <= 1.05x); an org's own route with its own key against a deployment
// route is org route / routed (goal <= 1.03x); the time to fail over before the first byte is each failover way's
// median minus the routed way's. The circuit breaker is held open-ended (MODEL_BREAKER_FAILURES out of reach) so
// every failover request really fails over.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig } from "./support/bench-config.ts";
import { freePort, type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

/** seeds/local.sql's key (an operator of dev-org), which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const WARMUP = 30;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const GOAL_RATIO = 1.05;
/** An org's own route with its own (decrypted) key, against a deployment route. */
const ORG_GOAL_RATIO = 1.03;

interface Way {
  name: string;
  model: string;
  ms: number[];
}

const row = (name: string, cells: string[]) => `${name.padEnd(22)}${cells.map((c) => c.padStart(12)).join("")}`;

async function put(url: string, path: string, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${url}${path}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`${path} not written: ${response.status} ${await response.text()}`);
  }
}

async function putRoute(url: string, name: string, body: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${url}/admin/model-routes/${name}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`route ${name} not written: ${response.status} ${await response.text()}`);
  }
}

async function timeCall(url: string, way: Way, content: string): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: way.model, messages: [{ role: "user", content }] }),
  });
  const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
  const elapsed = performance.now() - started;
  if (response.status !== 200 || body.choices?.[0]?.message?.content !== "pong") {
    throw new Error(`${way.name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  way.ms.push(elapsed);
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-routes-"));
  const good = await startScriptedUpstream();
  const failing = await startScriptedUpstream();
  let worker: LocalWorker | null = null;
  const stopAll = async () => {
    await worker?.stop();
    await Promise.all([good.close(), failing.close()]);
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stopAll().then(() => process.exit(130));
  });
  try {
    console.log("Starting the Worker (wrangler dev, as npm start runs it) in front of two scripted upstreams ...");
    worker = await startLocalWorker({
      config: await benchConfig(tmp, true),
      vars: { LLM_BASE_URL: `${good.url}/v1`, MODEL_BREAKER_FAILURES: "1000000000" },
    });
    const url = worker.url;
    const closedPort = await freePort();
    await putRoute(url, "bench", { provider: "openai_compatible", model: "bench-model", baseUrl: `${good.url}/v1` });
    // dev-org's own route to the same upstream, its key one of dev-org's secrets.
    await put(url, "/admin/secrets/BENCH_ORG_KEY", { value: "sk-bench-org-key-0123456789" });
    await put(url, "/admin/model-routes/orgbench?owner=org", {
      provider: "openai_compatible",
      model: "bench-model",
      baseUrl: `${good.url}/v1`,
      apiKeySecret: "BENCH_ORG_KEY",
    });
    await putRoute(url, "flaky", {
      provider: "openai_compatible",
      model: "flaky-model",
      baseUrl: `${failing.url}/v1`,
      fallbacks: ["bench"],
    });
    await putRoute(url, "refused", {
      provider: "openai_compatible",
      model: "refused-model",
      baseUrl: `http://127.0.0.1:${closedPort}/v1`,
      fallbacks: ["bench"],
    });
    const answer = good.createScript([{ type: "completion", content: "pong" }], { repeat: true, record: false });
    const broken = failing.createScript(
      [{ type: "error", status: 503, body: { error: { message: "overloaded", type: "server_error" } } }],
      { repeat: true, record: false },
    );
    const content = `ping ${answer.marker} ${broken.marker}`;
    const ways: Way[] = [
      { name: "direct (default)", model: "bench-model", ms: [] },
      { name: "routed", model: "bench", ms: [] },
      { name: "org route (own key)", model: "orgbench", ms: [] },
      { name: "failover (503)", model: "flaky", ms: [] },
      { name: "failover (refused)", model: "refused", ms: [] },
    ];
    for (let i = 0; i < WARMUP; i++) for (const way of ways) await timeCall(url, way, content);
    for (const way of ways) way.ms = [];
    for (let i = 0; i < SAMPLES; i++) {
      for (let k = 0; k < ways.length; k++) await timeCall(url, ways[(k + i) % ways.length] as Way, content);
    }
    const median = (w: Way) => percentile(w.ms, 50);
    const [direct, routed, org, ...failovers] = ways as [Way, Way, Way, ...Way[]];
    const ratio = median(routed) / median(direct);
    const orgRatio = median(org) / median(routed);
    console.log(
      [
        "",
        `Model routes benchmark (wrangler dev, ${new Date().toISOString().slice(0, 10)}): one non-streamed chat completion`,
        `through /v1, ${SAMPLES} requests per way after ${WARMUP} warm-up, one at a time, the ways taking turns.`,
        "",
        row("ms per call", ["median", "p99", "/ direct", "- routed"]),
        ...ways.map((w) =>
          row(w.name, [
            fixed(median(w)),
            fixed(percentile(w.ms, 99)),
            `${fixed(median(w) / median(direct))}x`,
            w === direct || w === routed || w === org ? "" : fixed(median(w) - median(routed)),
          ]),
        ),
        "",
        `goal: routing costs at most ${GOAL_RATIO}x a direct call (median): ${ratio <= GOAL_RATIO ? "met" : "MISSED"} (${fixed(ratio)}x)`,
        `goal: an org's own route with its own key costs at most ${ORG_GOAL_RATIO}x a deployment route (median): ${orgRatio <= ORG_GOAL_RATIO ? "met" : "MISSED"} (${fixed(orgRatio, 3)}x)`,
        ...failovers.map(
          (w) => `time to fail over before the first byte, ${w.name}: ${fixed(median(w) - median(routed))} ms`,
        ),
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

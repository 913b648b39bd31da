// npm run bench:meter — what the meter costs a model call: two Workers under `wrangler dev`, in front of the same
// scripted upstream, in the same run. One has budgets off (METER_BUDGETS=off: the call is not reserved; its usage
// row is still written, after the response); the other has them on, with a budget set on the org, so every call
// reserves an estimate in the org's OrgMeter Durable Object before it goes upstream (in parallel with the key's
// rate limiter) and settles it after the response. The same non-streamed chat completion through /v1, one request
// at a time, the two taking turns. Goal: metered within 1.1x of unmetered (median).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

/** seeds/local.sql's key (chat and admin), which the local database of `startLocalWorker` holds. */
const KEY = "dev-key";
const WARMUP = 30;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const GOAL_RATIO = 1.1;

interface Way {
  name: string;
  url: string;
  ms: number[];
}

async function timeCall(way: Way, content: string): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${way.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "bench-model", max_tokens: 16, messages: [{ role: "user", content }] }),
  });
  const body = (await response.json()) as { choices?: { message?: { content?: string } }[] };
  const elapsed = performance.now() - started;
  if (response.status !== 200 || body.choices?.[0]?.message?.content !== "pong") {
    throw new Error(`${way.name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  way.ms.push(elapsed);
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-meter-"));
  const upstream = await startScriptedUpstream();
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
    console.log("Starting two Workers (wrangler dev, as npm start runs it): budgets off, and budgets on ...");
    const config = await benchConfig(tmp, true);
    const vars = { LLM_BASE_URL: `${upstream.url}/v1` };
    workers.push(await startLocalWorker({ config, vars: { ...vars, METER_BUDGETS: "off" } }));
    workers.push(await startLocalWorker({ config, vars }));
    const [off, on] = workers as [LocalWorker, LocalWorker];
    const budget = await fetch(`${on.url}/admin/budget`, {
      method: "PUT",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ tokensPerDay: 1_000_000_000, tokensPerMonth: 1_000_000_000 }),
    });
    if (budget.status !== 200) throw new Error(`the budget was not set: ${budget.status} ${await budget.text()}`);
    const script = upstream.createScript([{ type: "completion", content: "pong" }], { repeat: true, record: false });
    const content = `ping ${script.marker}`;
    const ways: Way[] = [
      { name: "unmetered (budgets off)", url: off.url, ms: [] },
      { name: "metered (reserve + settle)", url: on.url, ms: [] },
    ];
    for (let i = 0; i < WARMUP; i++) for (const way of ways) await timeCall(way, content);
    for (const way of ways) way.ms = [];
    for (let i = 0; i < SAMPLES; i++) {
      for (let k = 0; k < ways.length; k++) await timeCall(ways[(k + i) % ways.length] as Way, content);
    }
    const median = (w: Way) => percentile(w.ms, 50);
    const [unmetered, metered] = ways as [Way, Way];
    const ratio = median(metered) / median(unmetered);
    // The isolate's last lease (and the settles that go with it) reaches the meter at the lease's end (METER_LEASE_MS).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const status = (await (
      await fetch(`${on.url}/admin/budget`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as { budget: { day: { tokens: number }; reserved: { tokens: number } } };
    const row = (name: string, cells: string[]) => `${name.padEnd(30)}${cells.map((c) => c.padStart(12)).join("")}`;
    console.log(
      [
        "",
        `Meter benchmark (wrangler dev, ${new Date().toISOString().slice(0, 10)}): one non-streamed chat completion through`,
        `/v1, ${SAMPLES} requests per Worker after ${WARMUP} warm-up, one at a time, the two taking turns.`,
        "",
        row("ms per call", ["median", "p99", "/ unmetered"]),
        ...ways.map((w) =>
          row(w.name, [fixed(median(w)), fixed(percentile(w.ms, 99)), `${fixed(median(w) / median(unmetered))}x`]),
        ),
        "",
        `goal: the metered call within ${GOAL_RATIO}x of the unmetered one (median): ${ratio <= GOAL_RATIO ? "met" : "MISSED"} (${fixed(ratio)}x)`,
        `the metered org's meter afterwards: ${status.budget.day.tokens} tokens spent today, ${status.budget.reserved.tokens} reserved (0: every call settled)`,
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

await main();

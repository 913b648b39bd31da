// npm run bench:identity — what a request pays for who it is: one Worker under `wrangler dev` (as npm start runs
// it), the same person (the local key's user) calling it three ways in the same run:
//   - GET /modes with the API key, and with the browser session cookie the console holds after sign-in;
//   - tools/list on /mcp with the API key (which the OAuth front door hands on as a key), and with an OAuth access
//     token an MCP client got through the whole flow (registration, sign-in, consent, code with PKCE).
// One request at a time, the ways of a pair taking turns. Goal: the cookie and the OAuth token each within 1.05x
// of the API key on the same route (median).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authorizedClient, listTools, type OAuthDoor } from "../test/oauth/client-flow.ts";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

const KEY = "dev-key";
const WARMUP = 50;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const GOAL_RATIO = 1.05;

interface Way {
  name: string;
  request: () => Promise<Response>;
  ms: number[];
}

async function time(way: Way): Promise<void> {
  const started = performance.now();
  const response = await way.request();
  await response.arrayBuffer();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`${way.name} answered ${response.status}`);
  way.ms.push(elapsed);
}

/** Runs a pair of ways, taking turns; answers the second's median over the first's. */
async function runPair(pair: [Way, Way]): Promise<number> {
  for (let i = 0; i < WARMUP; i++) for (const way of pair) await time(way);
  for (const way of pair) way.ms = [];
  for (let i = 0; i < SAMPLES; i++) for (let k = 0; k < 2; k++) await time(pair[(k + i) % 2] as Way);
  return percentile(pair[1].ms, 50) / percentile(pair[0].ms, 50);
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-identity-"));
  let worker: LocalWorker | undefined;
  const stop = async () => {
    await worker?.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stop().then(() => process.exit(130));
  });
  try {
    console.log("Starting the Worker (wrangler dev, as npm start runs it) ...");
    worker = await startLocalWorker({ config: await benchConfig(tmp, true) });
    const url = worker.url;
    const door: OAuthDoor = { origin: url, fetch: (target, init) => fetch(target, init) };
    // The person signs in in a browser (its cookie), and allows an MCP client (its access token).
    const { tokens, cookie } = await authorizedClient(door, KEY, "bench client");
    const token = tokens.access_token;
    const modes = (headers: Record<string, string>) => () => fetch(`${url}/modes`, { headers });
    const cookiePair: [Way, Way] = [
      { name: "GET /modes, API key", request: modes({ authorization: `Bearer ${KEY}` }), ms: [] },
      { name: "GET /modes, session cookie", request: modes({ cookie }), ms: [] },
    ];
    const oauthPair: [Way, Way] = [
      { name: "/mcp tools/list, API key", request: () => listTools(door, KEY), ms: [] },
      { name: "/mcp tools/list, OAuth token", request: () => listTools(door, token), ms: [] },
    ];
    const cookieRatio = await runPair(cookiePair);
    const oauthRatio = await runPair(oauthPair);
    const row = (name: string, cells: string[]) => `${name.padEnd(32)}${cells.map((c) => c.padStart(12)).join("")}`;
    const lines = (pair: [Way, Way]) =>
      pair.map((w) =>
        row(w.name, [
          fixed(percentile(w.ms, 50)),
          fixed(percentile(w.ms, 90)),
          `${fixed(percentile(w.ms, 50) / percentile(pair[0].ms, 50))}x`,
        ]),
      );
    const verdict = (ratio: number) => `${ratio <= GOAL_RATIO ? "met" : "MISSED"} (${fixed(ratio)}x)`;
    console.log(
      [
        "",
        `Identity benchmark (wrangler dev, ${new Date().toISOString().slice(0, 10)}): the same user, ${SAMPLES} requests per way`,
        `after ${WARMUP} warm-up, one at a time, the two ways of a pair taking turns.`,
        "",
        row("ms per request", ["median", "p90", "/ API key"]),
        ...lines(cookiePair),
        ...lines(oauthPair),
        "",
        `goal: within ${GOAL_RATIO}x of the API key on the same route (median): cookie ${verdict(cookieRatio)}, OAuth token ${verdict(oauthRatio)}`,
      ].join("\n"),
    );
  } finally {
    await stop();
  }
}

await main();

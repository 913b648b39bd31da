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
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

const KEY = "dev-key";
const WARMUP = 50;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const GOAL_RATIO = 1.05;
const REDIRECT_URI = "http://127.0.0.1:5555/callback";

interface Way {
  name: string;
  request: () => Promise<Response>;
  ms: number[];
}

function cookiesOf(response: Response): string[] {
  return response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0] ?? "")
    .filter((pair) => /^[^=]+=.+/.test(pair));
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/** A browser session of the key's user (POST /auth/session, as the sign-in page does): its cookie. */
async function browserSession(url: string): Promise<string> {
  const response = await fetch(`${url}/auth/session`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ api_key: KEY, return_to: "/" }),
    redirect: "manual",
  });
  const [cookie] = cookiesOf(response);
  if (response.status !== 302 || !cookie) throw new Error(`no browser session: ${response.status}`);
  return cookie;
}

/** An MCP client's access token, through registration, consent (as the cookie's person) and the code with PKCE. */
async function oauthToken(url: string, cookie: string): Promise<string> {
  const registered = await fetch(`${url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "bench client",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: "s",
    scope: "chat",
    resource: `${url}/mcp`,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const page = await fetch(`${url}/authorize?${query}`, { headers: { cookie } });
  const handle = /name="handle" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!handle) throw new Error(`no consent page: ${page.status}`);
  const answered = await fetch(`${url}/authorize`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: [cookie, ...cookiesOf(page)].join("; ") },
    body: new URLSearchParams({ handle, decision: "allow" }),
    redirect: "manual",
  });
  const code = new URL(answered.headers.get("location") ?? "http://x").searchParams.get("code");
  if (!code) throw new Error(`no code: ${answered.status}`);
  const tokens = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${url}/mcp`,
    }),
  });
  const { access_token: token } = (await tokens.json()) as { access_token?: string };
  if (!token) throw new Error(`no token: ${tokens.status}`);
  return token;
}

const toolsList = (url: string, token: string) => () =>
  fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });

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
    const cookie = await browserSession(url);
    const token = await oauthToken(url, cookie);
    const modes = (headers: Record<string, string>) => () => fetch(`${url}/modes`, { headers });
    const cookiePair: [Way, Way] = [
      { name: "GET /modes, API key", request: modes({ authorization: `Bearer ${KEY}` }), ms: [] },
      { name: "GET /modes, session cookie", request: modes({ cookie }), ms: [] },
    ];
    const oauthPair: [Way, Way] = [
      { name: "/mcp tools/list, API key", request: toolsList(url, KEY), ms: [] },
      { name: "/mcp tools/list, OAuth token", request: toolsList(url, token), ms: [] },
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

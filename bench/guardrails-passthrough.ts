// The passthrough half of npm run bench:guardrails — what the org's guardrails add to the passthrough (issue 45): the
// same POST /v1/chat/completions from two orgs of one Worker under `wrangler dev` (as npm start runs it) in front of
// the scripted upstream: one with its `pii` and `secrets` guardrails on input and output (mask on the way in, redact on
// the way out, `passthrough: true`), the other (dev-org, the baseline) with none. The client's message carries an
// email address and the model answers with its placeholder, so every guarded request masks, rewrites the body, checks
// the answer and restores. The two orgs' requests are paired, one after the other (which goes first alternates), so
// both sides see the same moments of a noisy machine; JSON and streams; a stream's time is to its last byte (its text
// is held until it is checked). Reported: median and p95 of each side and on ÷ off (goal: at most GOAL_RATIO,
// median). The first answers are checked before timing: the model read the placeholder (on) or the address (off), and
// the client read the address back (both).
//
// bench/guardrails.ts runs it after the turn's half, on the same Worker and upstream
// (`BENCH_GUARDRAILS_PART=passthrough npm run bench:guardrails` runs it alone).
import { cpus, loadavg } from "node:os";
import type { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { api } from "./support/bench-api.ts";
import { fixed, percentile, table } from "./support/stats.ts";

/** seeds/local.sql's key (an operator of dev-org), which the local database holds: the baseline's org. */
const KEY = "dev-key";
/** The guarded side's org, made for the run (an operator's key may be of another org). */
const GUARDED_ORG = `bench-guarded-${Date.now()}`;
const PAIRS = Number(process.env.BENCH_PAIRS ?? 800);
const WARMUP = 20;
const GOAL_RATIO = 1.05;
const EMAIL = "dana.smith@example.com";

const GUARDRAILS = [
  { kind: "pii", points: ["input"], action: "mask" },
  { kind: "secrets", points: ["input"], action: "mask" },
  { name: "pii_out", kind: "pii", points: ["output"], action: "redact" },
  { name: "secrets_out", kind: "secrets", points: ["output"], action: "redact" },
];

type Upstream = Awaited<ReturnType<typeof startScriptedUpstream>>;
const now = () => performance.timeOrigin + performance.now();

async function call(url: string, key: string, method: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** An admin key of a new org whose guardrails are on for the passthrough. */
async function guardedKey(url: string): Promise<string> {
  const created = await api(url, "POST", "/admin/keys", {
    org: GUARDED_ORG,
    name: "bench guarded",
    scopes: ["chat", "admin"],
  });
  const key = String(created.secret);
  await api(url, "PUT", "/admin/guardrails", { guardrails: GUARDRAILS, passthrough: true }, key);
  return key;
}

interface Side {
  name: string;
  key: string;
  on: boolean;
  json: number[];
  stream: number[];
}

/** One request; answers the text the client read (JSON: the message; a stream: its raw body). */
async function request(
  url: string,
  key: string,
  marker: string,
  stream: boolean,
  times: number[] | null,
): Promise<string> {
  const body = {
    model: "bench-model",
    stream,
    messages: [
      { role: "system", content: "You are a careful assistant." },
      { role: "user", content: `Please draft a short note to ${EMAIL} about the release. ${marker}` },
    ],
  };
  const started = now();
  const response = await call(url, key, "POST", "/v1/chat/completions", body);
  const text = await response.text();
  times?.push(now() - started);
  if (response.status !== 200)
    throw new Error(`/v1/chat/completions answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

/** The user message of the upstream's last request of the script. */
function lastUserMessage(upstream: Upstream, id: string): string {
  const sent = upstream.requests(id).at(-1);
  const body = JSON.parse(sent?.body ?? "{}") as { messages?: { role: string; content: string }[] };
  return body.messages?.find((m) => m.role === "user")?.content ?? "";
}

/** The passthrough with pii and secrets on input and output (one org) against none (another), request by request. */
export async function passthroughHalf(url: string, upstream: Upstream): Promise<string> {
  const script = upstream.createScript(
    [{ type: "completion", content: "Drafted a note to [EMAIL_1].", chunkSize: 8 }],
    {
      repeat: true,
    },
  );
  // The baseline's org has no guardrail on the passthrough (the turn's half leaves dev-org's list empty).
  await api(url, "PUT", "/admin/guardrails", { guardrails: [], passthrough: false });
  const on: Side = {
    name: "pii + secrets, input mask, output redact",
    key: await guardedKey(url),
    on: true,
    json: [],
    stream: [],
  };
  const off: Side = { name: "no guardrails (baseline)", key: KEY, on: false, json: [], stream: [] };
  for (const side of [on, off]) {
    const answer = await request(url, side.key, script.marker, false, null);
    const read = lastUserMessage(upstream, script.id);
    if (side.on && (read.includes(EMAIL) || !read.includes("[EMAIL_1]"))) throw new Error(`on: the model read ${read}`);
    if (!side.on && !read.includes(EMAIL)) throw new Error(`off: the model read ${read}`);
    if (side.on && !answer.includes(`Drafted a note to ${EMAIL}.`)) throw new Error(`on answered ${answer}`);
  }
  for (let i = 0; i < WARMUP; i++) {
    for (const side of [on, off]) await request(url, side.key, script.marker, i % 2 === 0, null);
  }
  const load = [loadavg()[0] ?? 0];
  for (let pair = 0; pair < PAIRS; pair++) {
    const stream = pair % 2 === 1;
    // Which side goes first alternates every two pairs (so each of JSON and streams has both orders).
    for (const side of Math.floor(pair / 2) % 2 === 0 ? [on, off] : [off, on]) {
      await request(url, side.key, script.marker, stream, stream ? side.stream : side.json);
    }
    if (pair % 100 === 0) load.push(loadavg()[0] ?? 0);
  }
  load.push(loadavg()[0] ?? 0);
  const rows = (pick: (s: Side) => number[]) =>
    [on, off].map((s) => [
      s.name,
      fixed(percentile(pick(s), 50)),
      fixed(percentile(pick(s), 95)),
      `${fixed(percentile(pick(s), 50) / percentile(pick(off), 50))}x`,
      `${fixed(percentile(pick(s), 95) / percentile(pick(off), 95))}x`,
    ]);
  const jsonRatio = percentile(on.json, 50) / percentile(off.json, 50);
  const streamRatio = percentile(on.stream, 50) / percentile(off.stream, 50);
  const verdict = (r: number) => `${r <= GOAL_RATIO ? "met" : "MISSED"} (${fixed(r)}x)`;
  return [
    "",
    `Guardrails on the passthrough: ${PAIRS / 2} JSON and ${PAIRS / 2} streamed chat completions a side after ${WARMUP}`,
    "warm-up, one at a time, an org with the guardrails and one without taking turns request by request; the message",
    "carries an email address, the answer its placeholder (restored for the client).",
    `Load average (1 min) over the run: ${load.map((l) => fixed(l)).join(", ")} on ${cpus().length} cores.`,
    "",
    table(
      ["ms, JSON", "median", "p95", "÷ off (median)", "÷ off (p95)"],
      rows((s) => s.json),
    ),
    "",
    table(
      ["ms to the last byte, streamed", "median", "p95", "÷ off (median)", "÷ off (p95)"],
      rows((s) => s.stream),
    ),
    "",
    `goal: JSON with guardrails on within ${GOAL_RATIO}x of off (median): ${verdict(jsonRatio)}`,
    `goal: streams with guardrails on within ${GOAL_RATIO}x of off (median): ${verdict(streamRatio)}`,
  ].join("\n");
}

// The passthrough half of npm run bench:guardrails — what the org's guardrails add to the passthrough (issue 45): the
// same POST /v1/chat/completions with the org's `pii` and `secrets` guardrails on input and output (mask on the way
// in, redact on the way out, `passthrough: true`) and with the switch off, on one Worker under `wrangler dev` (as npm
// start runs it) in front of the scripted upstream. The client's message carries an email address and the model
// answers with its placeholder, so every guarded request masks, rewrites the body, checks the answer and restores.
// Requests one at a time in blocks, the switch flipped between blocks (which side goes first alternates), JSON and
// streams; a stream's time is to its last byte (its text is held until it is checked). Reported: median and p95 of
// each side and on ÷ off (goal: at most GOAL_RATIO, median). The first answers are checked before timing: the model
// read the placeholder (on) or the address (off), and the client read the address back (both).
//
// bench/guardrails.ts runs it after the turn's half, on the same Worker and upstream
// (`BENCH_GUARDRAILS_PART=passthrough npm run bench:guardrails` runs it alone).
import { cpus, loadavg } from "node:os";
import type { startScriptedUpstream } from "../test/upstream/scripted-upstream.ts";
import { fixed, percentile, table } from "./support/stats.ts";

/** seeds/local.sql's key (an operator of dev-org), which the local database holds. */
const KEY = "dev-key";
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 20);
const PER_BLOCK = Number(process.env.BENCH_PER_BLOCK ?? 20);
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

async function call(url: string, method: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function setSwitch(url: string, on: boolean): Promise<void> {
  const response = await call(url, "PUT", "/admin/guardrails", { guardrails: GUARDRAILS, passthrough: on });
  if (!response.ok) throw new Error(`PUT /admin/guardrails answered ${response.status}: ${await response.text()}`);
}

interface Side {
  name: string;
  on: boolean;
  json: number[];
  stream: number[];
}

/** One request; answers the text the client read (JSON: the message; a stream: its raw body). */
async function request(url: string, marker: string, stream: boolean, times: number[] | null): Promise<string> {
  const body = {
    model: "bench-model",
    stream,
    messages: [
      { role: "system", content: "You are a careful assistant." },
      { role: "user", content: `Please draft a short note to ${EMAIL} about the release. ${marker}` },
    ],
  };
  const started = now();
  const response = await call(url, "POST", "/v1/chat/completions", body);
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

/** The passthrough with pii and secrets on input and output against the same org with the switch off. */
export async function passthroughHalf(url: string, upstream: Upstream): Promise<string> {
  const script = upstream.createScript(
    [{ type: "completion", content: "Drafted a note to [EMAIL_1].", chunkSize: 8 }],
    {
      repeat: true,
    },
  );
  const on: Side = { name: "pii + secrets, input mask, output redact", on: true, json: [], stream: [] };
  const off: Side = { name: "switch off (baseline)", on: false, json: [], stream: [] };
  for (const side of [on, off]) {
    await setSwitch(url, side.on);
    const answer = await request(url, script.marker, false, null);
    const read = lastUserMessage(upstream, script.id);
    if (side.on && (read.includes(EMAIL) || !read.includes("[EMAIL_1]"))) throw new Error(`on: the model read ${read}`);
    if (!side.on && !read.includes(EMAIL)) throw new Error(`off: the model read ${read}`);
    if (side.on && !answer.includes(`Drafted a note to ${EMAIL}.`)) throw new Error(`on answered ${answer}`);
    for (let i = 0; i < WARMUP; i++) await request(url, script.marker, i % 2 === 0, null);
  }
  const load = [loadavg()[0] ?? 0];
  for (let block = 0; block < BLOCKS; block++) {
    for (const side of block % 2 === 0 ? [on, off] : [off, on]) {
      await setSwitch(url, side.on);
      for (let i = 0; i < PER_BLOCK; i++) {
        await request(url, script.marker, false, side.json);
        await request(url, script.marker, true, side.stream);
      }
    }
    if (block % 5 === 0) load.push(loadavg()[0] ?? 0);
  }
  load.push(loadavg()[0] ?? 0);
  // The org's list applies to every mode too: left empty, as it was, for whatever runs next.
  await call(url, "PUT", "/admin/guardrails", { guardrails: [], passthrough: false });
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
    `Guardrails on the passthrough: ${BLOCKS * PER_BLOCK} JSON and ${BLOCKS * PER_BLOCK} streamed chat completions a`,
    `side after ${WARMUP} warm-up, one at a time, in ${BLOCKS} blocks of ${PER_BLOCK} with the org's switch flipped between`,
    "them; the message carries an email address, the answer its placeholder (restored for the client).",
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

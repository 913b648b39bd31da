// npm run bench:guardrails — what guardrails add to a turn, and (its second half) to the passthrough. One Worker
// under `wrangler dev` (as npm start runs it) in front of the scripted upstream answering one short answer per turn.
//
// The turn half: two modes alike in all but their guardrails: on (`pii` and `secrets` on input and output: mask on
// the way in, redact on the way out, so every turn reads the session's vault, masks the message, restores the answer
// and holds the answer's text until it is checked) and off (none). The person's message carries an email address;
// the model answers with its placeholder. Turns through POST /context/sessions/:id/messages, one at a time, the two
// modes taking turns (which goes first alternates); a session starts over every MESSAGES_PER_SESSION messages.
// Reported: median and p95 of a turn's round trip in each mode and on ÷ off (goal: at most GOAL_RATIO). The first
// turn of each mode is checked: the model read the placeholder (on) or the address (off), and the person read the
// address back (both).
//
// The passthrough half: bench/guardrails-passthrough.ts (the passthrough's guardrails, measured in the same run,
// against the same Worker and upstream). BENCH_GUARDRAILS_PART=turn|passthrough runs one half.
import { cpus, loadavg } from "node:os";
import { passthroughHalf } from "./guardrails-passthrough.ts";
import { api } from "./support/bench-api.ts";
import { type ScriptedUpstream, withScriptedWorker } from "./support/scripted-worker.ts";
import { fixed, percentile, table } from "./support/stats.ts";

const UPSTREAM_KEY = "sk-bench-guardrails";
const WARMUP = 10;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const MESSAGES_PER_SESSION = 10;
const GOAL_RATIO = 1.05;
const EMAIL = "dana.smith@example.com";
/** Which halves run: `turn`, `passthrough`, or both (the default). */
const PART = process.env.BENCH_GUARDRAILS_PART ?? "all";

const GUARDRAILS = [
  { kind: "pii", points: ["input"], action: "mask" },
  { kind: "secrets", points: ["input"], action: "mask" },
  { name: "pii_out", kind: "pii", points: ["output"], action: "redact" },
  { name: "secrets_out", kind: "secrets", points: ["output"], action: "redact" },
];

const now = () => performance.timeOrigin + performance.now();

type Upstream = ScriptedUpstream;

interface Side {
  name: string;
  mode: string;
  script: { id: string; marker: string };
  session: string | null;
  times: number[];
  firstAnswer: string | null;
}

async function turn(url: string, side: Side, i: number): Promise<void> {
  if (i % MESSAGES_PER_SESSION === 0 || !side.session) {
    side.session = String((await api(url, "POST", "/context/sessions", { mode: side.mode })).sessionId);
  }
  const started = now();
  const answer = await api(url, "POST", `/context/sessions/${side.session}/messages`, {
    content: `Please draft a short note to ${EMAIL} about the release (${i}). ${side.script.marker}`,
  });
  side.times.push(now() - started);
  if (answer.status !== "completed") throw new Error(`a turn in ${side.mode} ended ${String(answer.status)}`);
  side.firstAnswer ??= String(answer.text);
}

/** The person's message as the first request of `side` sent it to the model. */
function firstUserMessage(upstream: Upstream, side: Side): string {
  const [first] = upstream.requests(side.script.id);
  const body = JSON.parse(first?.body ?? "{}") as { messages?: { role: string; content: string }[] };
  return body.messages?.find((m) => m.role === "user")?.content ?? "";
}

/** The turn half: a turn with pii and secrets on input and output against the same mode with none. */
async function turnHalf(url: string, upstream: Upstream): Promise<string> {
  for (const on of [true, false]) {
    await api(url, "PUT", `/admin/modes/bench_guardrails_${on ? "on" : "off"}`, {
      displayName: `Guardrails bench (${on ? "on" : "off"})`,
      description: "The guardrails benchmark's mode.",
      systemPrompt: "You are a careful assistant. Keep answers short.",
      tools: ["agent_hello_world"],
      guardrails: on ? GUARDRAILS : [],
    });
  }
  const side = (name: string, mode: string): Side => ({
    name,
    mode,
    script: upstream.createScript([{ type: "completion", content: "Drafted a note to [EMAIL_1]." }], { repeat: true }),
    session: null,
    times: [],
    firstAnswer: null,
  });
  const on = side("pii + secrets, input mask, output redact", "bench_guardrails_on");
  const off = side("no guardrails (baseline)", "bench_guardrails_off");
  const load = [loadavg()[0] ?? 0];
  for (let i = 0; i < WARMUP; i++) for (const s of [on, off]) await turn(url, s, i);
  if (firstUserMessage(upstream, on).includes(EMAIL) || !firstUserMessage(upstream, on).includes("[EMAIL_1]")) {
    throw new Error(`guardrails on: the model read ${firstUserMessage(upstream, on)}`);
  }
  if (!firstUserMessage(upstream, off).includes(EMAIL)) throw new Error("guardrails off: the address did not go");
  if (on.firstAnswer !== `Drafted a note to ${EMAIL}.`) throw new Error(`guardrails on answered ${on.firstAnswer}`);
  on.times = [];
  off.times = [];
  for (let i = 0; i < SAMPLES; i++) {
    for (const s of i % 2 === 0 ? [on, off] : [off, on]) await turn(url, s, i);
    if (i % 50 === 0) load.push(loadavg()[0] ?? 0);
  }
  load.push(loadavg()[0] ?? 0);
  const median = (s: Side) => percentile(s.times, 50);
  const p95 = (s: Side) => percentile(s.times, 95);
  const ratio = median(on) / median(off);
  return [
    "",
    `Guardrails on a turn: ${SAMPLES} turns in each mode after ${WARMUP} warm-up, one at a time, the modes taking`,
    `turns; a new session every ${MESSAGES_PER_SESSION} messages; the message carries an email address, the answer`,
    "its placeholder (restored for the person).",
    `Load average (1 min) over the run: ${load.map((l) => fixed(l)).join(", ")} on ${cpus().length} cores.`,
    "",
    table(
      ["ms a turn (POST .../messages)", "median", "p95", "÷ off (median)", "÷ off (p95)"],
      [on, off].map((s) => [
        s.name,
        fixed(median(s)),
        fixed(p95(s)),
        `${fixed(median(s) / median(off))}x`,
        `${fixed(p95(s) / p95(off))}x`,
      ]),
    ),
    "",
    `goal: guardrails on within ${GOAL_RATIO}x of off (median): ${ratio <= GOAL_RATIO ? "met" : "MISSED"} (${fixed(ratio)}x)`,
  ].join("\n");
}

async function main(): Promise<void> {
  await withScriptedWorker("guardrails", UPSTREAM_KEY, async (url, upstream) => {
    // The org's own list is left empty: the turn half measures a mode's guardrails alone.
    await api(url, "PUT", "/admin/guardrails", { guardrails: [], passthrough: false });
    const reports: string[] = [];
    if (PART !== "passthrough") reports.push(await turnHalf(url, upstream));
    if (PART !== "turn") reports.push(await passthroughHalf(url, upstream));
    console.log(reports.filter(Boolean).join("\n"));
  });
}

await main();

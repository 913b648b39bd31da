// npm run bench:memory — what memory adds to a turn: the session owner's memories read from D1 at the turn's start
// (beside the mode and base prompt) and the "What you know about this person" section built into the prompt. One
// Worker under `wrangler dev` (as npm start runs it) in front of the scripted upstream answering one short answer
// per turn; dev-user holds MEMORIES memories (a few pinned). Two modes alike in all but their `memory` flag: on
// (the recall read, the section, the memory tools offered) and off (no read, no section, no memory tools). Turns
// through POST /context/sessions/:id/messages, one at a time, the two modes taking turns (which goes first
// alternates); a session starts over every MESSAGES_PER_SESSION messages. Reported: median and p95 of a turn's
// round trip in each mode and on ÷ off (goal: at most GOAL_RATIO). The first turn of each mode is checked: the
// model was sent the section and the memory tools (on), and no section and no memory tool (off).
import { cpus, loadavg } from "node:os";
import { api } from "./support/bench-api.ts";
import { type ScriptedUpstream, withScriptedWorker } from "./support/scripted-worker.ts";
import { fixed, percentile, table } from "./support/stats.ts";

const UPSTREAM_KEY = "sk-bench-memory";
const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 50);
const PINNED = 5;
const WARMUP = 10;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const MESSAGES_PER_SESSION = 10;
const GOAL_RATIO = 1.05;
const SECTION = "## What you know about this person";
const MEMORY_TOOLS = ["memory_save", "memory_search"];

const now = () => performance.timeOrigin + performance.now();

/**
 * Facts of the length people state them, each sharing few words with the others (a save that overlaps an old memory
 * updates it instead of adding one: src/memory/memory-match.ts).
 */
function fact(n: number): string {
  const places = ["north", "south", "harbour", "garden", "station", "library", "market", "tower", "bridge", "castle"];
  return `Code ${n}a opens room ${n}b on floor ${n}c of the ${places[n % places.length]} building.`;
}

interface Side {
  name: string;
  mode: string;
  script: { id: string; marker: string };
  session: string | null;
  times: number[];
}

async function turn(url: string, side: Side, i: number): Promise<void> {
  if (i % MESSAGES_PER_SESSION === 0 || !side.session) {
    side.session = String((await api(url, "POST", "/context/sessions", { mode: side.mode })).sessionId);
  }
  const started = now();
  const answer = await api(url, "POST", `/context/sessions/${side.session}/messages`, {
    content: `What should I look at next in the project (${i})? ${side.script.marker}`,
  });
  side.times.push(now() - started);
  if (answer.status !== "completed") throw new Error(`a turn in ${side.mode} ended ${String(answer.status)}`);
}

/** What the first request of `side` sent the model: the memory lines of its system prompt, and its tools. */
function firstRequest(upstream: ScriptedUpstream, side: Side) {
  const [first] = upstream.requests(side.script.id);
  const body = JSON.parse(first?.body ?? "{}") as {
    messages?: { role: string; content: string }[];
    tools?: { function: { name: string } }[];
  };
  const system = body.messages?.[0]?.content ?? "";
  const section = system.split(SECTION)[1] ?? null;
  return {
    lines: section === null ? null : section.split("\n").filter((l) => l.startsWith("- [")).length,
    tools: (body.tools ?? []).map((t) => t.function.name),
  };
}

async function main(): Promise<void> {
  await withScriptedWorker("memory", UPSTREAM_KEY, async (url, upstream) => {
    for (const memory of [true, false]) {
      await api(url, "PUT", `/admin/modes/bench_memory_${memory ? "on" : "off"}`, {
        displayName: `Memory bench (${memory ? "on" : "off"})`,
        description: "The memory benchmark's mode.",
        systemPrompt: "You are a careful engineering assistant. Keep answers short.",
        tools: ["agent_hello_world", ...MEMORY_TOOLS],
        memory,
      });
    }
    await api(url, "PUT", "/admin/memory", { enabled: true });
    await api(url, "DELETE", "/context/memories");
    for (let n = 0; n < MEMORIES; n++) {
      await api(url, "POST", "/context/memories", { text: fact(n), pinned: n < PINNED });
    }
    const side = (name: string, mode: string): Side => ({
      name,
      mode,
      script: upstream.createScript([{ type: "completion", content: "Look at the tests first." }], { repeat: true }),
      session: null,
      times: [],
    });
    const on = side("memory on (section read and built)", "bench_memory_on");
    const off = side("memory off (baseline)", "bench_memory_off");
    const load = [loadavg()[0] ?? 0];
    for (let i = 0; i < WARMUP; i++) for (const s of [on, off]) await turn(url, s, i);
    const seenOn = firstRequest(upstream, on);
    const seenOff = firstRequest(upstream, off);
    if ((MEMORIES > 0 && !seenOn.lines) || !MEMORY_TOOLS.every((t) => seenOn.tools.includes(t))) {
      throw new Error(`memory on: the model saw ${seenOn.lines} memories and ${seenOn.tools.join(", ")}`);
    }
    if (seenOff.lines !== null || MEMORY_TOOLS.some((t) => seenOff.tools.includes(t))) {
      throw new Error(`memory off: the model saw a memory section or memory tools (${seenOff.tools.join(", ")})`);
    }
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
    console.log(
      [
        "",
        `Memory benchmark: ${SAMPLES} turns in each mode after ${WARMUP} warm-up, one at a time, the modes taking turns;`,
        `dev-user holds ${MEMORIES} memories (${PINNED} pinned), of which the section showed ${seenOn.lines} (its budget:`,
        `0.15 of the prompt budget); a new session every ${MESSAGES_PER_SESSION} messages.`,
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
        `goal: memory on within ${GOAL_RATIO}x of off (median): ${ratio <= GOAL_RATIO ? "met" : "MISSED"} (${fixed(ratio)}x)`,
      ].join("\n"),
    );
  });
}

await main();

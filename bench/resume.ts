// npm run bench:resume — how soon a turn a crash cut off goes on. One Worker under `wrangler dev` (as npm start runs
// it) with the offline demo model: a slow turn starts ("tell me a slow story"), the whole process tree is killed
// (SIGKILL) mid-answer, and wrangler dev starts again on the same state. Measured in the same run, per round:
//   - resumed: from the restarted server answering to the cut-off turn's `turn_resumed` frame, seen by a socket
//     that reconnects at once (as the console does), which wakes the object;
//   - baseline: from the same moment to `turn_started` of a new message sent over a socket to another session
//     whose object is cold too (the first turn any object starts after a restart);
//   - unattended: with no client at all, from the restart to the turn's end, bounded by AGENT_RESUME_CHECK_MS (the
//     alarm that wakes a stopped object) plus the answer's own time.
// Goal: resumed within 1.5x of the baseline (median).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

const KEY = "dev-key";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const GOAL_RATIO = 1.5;
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

interface Frame {
  type: string;
  seq: number;
}

async function api<T>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

const newSession = (url: string) =>
  api<{ sessionId: string }>(url, "POST", "/context/sessions", {}).then((s) => s.sessionId);

/** A socket on the session (after `afterSeq`); resolves with the time the first frame of `type` arrived. */
async function socketUntil(
  url: string,
  sessionId: string,
  type: string,
  afterSeq: number | null,
  onOpen?: (socket: WebSocket) => void,
): Promise<{ at: number; lastSeq: number; socket: WebSocket }> {
  const { ticket } = await api<{ ticket: string }>(url, "POST", `/context/sessions/${sessionId}/ws-ticket`);
  const query = new URLSearchParams({ ticket, ...(afterSeq === null ? {} : { afterSeq: String(afterSeq) }) });
  const socket = new WebSocket(`${url.replace("http", "ws")}/context/sessions/${sessionId}/ws?${query}`);
  let lastSeq = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} frame within 60 s`)), 60_000);
    socket.addEventListener("open", () => onOpen?.(socket));
    socket.addEventListener("error", () => reject(new Error("the socket failed")));
    socket.addEventListener("message", (event) => {
      const frame = JSON.parse(String(event.data)) as Frame;
      lastSeq = Math.max(lastSeq, frame.seq);
      if (frame.type !== type) return;
      clearTimeout(timer);
      resolve({ at: performance.now(), lastSeq, socket });
    });
  });
}

/** The session's status in its owner's list (D1), which the object updates when it changes. */
async function listedStatus(url: string, sessionId: string): Promise<string | undefined> {
  const { sessions } = await api<{ sessions: { sessionId: string; status: string }[] }>(
    url,
    "GET",
    "/context/sessions",
  );
  return sessions.find((s) => s.sessionId === sessionId)?.status;
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-resume-"));
  const stateDir = join(tmp, "state");
  let worker: LocalWorker | undefined;
  const stop = async () => {
    await worker?.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stop().then(() => process.exit(130));
  });
  try {
    const config = await benchConfig(tmp, true);
    const resumed: number[] = [];
    const baseline: number[] = [];
    const unattended: number[] = [];
    console.log(
      `Starting the Worker (wrangler dev, as npm start runs it), killing and restarting it ${ROUNDS + 1} times ...`,
    );
    for (let round = 0; round <= ROUNDS; round++) {
      worker = await startLocalWorker({ config, stateDir, database: round === 0 });
      const url = worker.url;
      const [cut, cold] = await Promise.all([newSession(url), newSession(url)]);
      // A slow answer starts streaming; the socket that watches it knows the newest frame it saw.
      const watching = await socketUntil(url, cut, "assistant_delta", null, (socket) =>
        socket.send(JSON.stringify({ type: "user_message", content: "tell me a slow story", clientMessageId: "m" })),
      );
      watching.socket.close();
      await worker.kill();
      worker = await startLocalWorker({ config, stateDir });
      const ready = performance.now();
      if (round === ROUNDS) {
        // No client at all: the object's alarm wakes it. The session list (D1) says when the turn ended, without
        // touching the object.
        while (performance.now() - ready < 120_000 && (await listedStatus(worker.url, cut)) !== "idle") {
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        unattended.push(performance.now() - ready);
      } else {
        const [back, started] = await Promise.all([
          socketUntil(worker.url, cut, "turn_resumed", watching.lastSeq),
          socketUntil(worker.url, cold, "turn_started", null, (socket) =>
            socket.send(JSON.stringify({ type: "user_message", content: "hello", clientMessageId: "b" })),
          ),
        ]);
        // The resumed story is cancelled, so no later round resumes it again.
        back.socket.send(JSON.stringify({ type: "cancel" }));
        await new Promise((resolve) => setTimeout(resolve, 200));
        back.socket.close();
        started.socket.close();
        // The first round warms up (the Worker's first compile).
        if (round > 0) {
          resumed.push(back.at - ready);
          baseline.push(started.at - ready);
        }
      }
      await worker.stop();
      worker = undefined;
    }
    const ratio = percentile(resumed, 50) / percentile(baseline, 50);
    console.log("");
    console.log(`| measure (ms after the restarted server answers) | median | p90 |`);
    console.log(`| --- | --- | --- |`);
    console.log(
      `| turn_started of a new message, cold object (baseline) | ${fixed(percentile(baseline, 50))} | ${fixed(percentile(baseline, 90))} |`,
    );
    console.log(
      `| turn_resumed of the cut-off turn, a socket reconnecting | ${fixed(percentile(resumed, 50))} | ${fixed(percentile(resumed, 90))} |`,
    );
    console.log(
      `| the cut-off turn ended, no client at all (the alarm, then a 12 s answer) | ${fixed(unattended[0] ?? Number.NaN)} | |`,
    );
    console.log("");
    console.log(
      `resumed / baseline: ${fixed(ratio, 2)}x (goal ≤ ${GOAL_RATIO}x; ${ROUNDS - 1} rounds after a warm-up)`,
    );
  } finally {
    await stop();
  }
}

await main();

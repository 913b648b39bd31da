// docs/agent-session.md's crash example, run as written: the script under "Turns that survive a restart" starts its
// own `npm start`, kills that server's process group alone mid-answer (no broad kill), starts it again on the same
// state, and the cut-off turn completes by itself. Only the state directory, the log's place and the loopback address
// are the test's: the port comes from APTIX_URL, as the script reads it.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/support/local-worker.ts";
import { runToEnd } from "../fixtures/run-to-end.ts";

/** The ```sh block under the "Turns that survive a restart" heading. */
async function restartScript(): Promise<string> {
  const doc = await readFile("docs/agent-session.md", "utf8");
  const section = doc.slice(doc.indexOf("\n### Turns that survive a restart\n"));
  return /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
}

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Runs `script` in bash until it ends; past `timeoutMs`, bash is told to stop and its EXIT trap kills the server. */
function runScript(script: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  // Should the script stop half-way, the server it started (a process group of its own) goes with it.
  const guarded = `trap 'exit 1' TERM\ntrap '[ -n "$SERVER" ] && kill -9 -- -"$SERVER" 2>/dev/null' EXIT\n${script}`;
  return runToEnd("bash", ["-c", guarded], { timeoutMs, env, stop: (child) => child.kill("SIGTERM") });
}

/**
 * Two `npm start`s and a 12 s answer: about a minute on a quiet 2-core machine, several under a full `npm test`
 * beside other work (one start alone once took over 100 s), so this test waits longer than the project's 120 s.
 */
const SCRIPT_TIMEOUT_MS = 280_000;

describe("the crash example of docs/agent-session.md", () => {
  it("kills only the server it started, and the cut-off turn completes after the restart", {
    timeout: SCRIPT_TIMEOUT_MS + 20_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "aptix-restart-example-"));
    dirs.push(dir);
    const script = (await restartScript())
      .replaceAll("npm start -- ", `npm start -- --ip 127.0.0.1 --persist-to ${join(dir, "state")} `)
      .replaceAll("aptix.log", join(dir, "aptix.log"));
    expect(script).not.toMatch(/pkill|killall/);
    const port = await freePort();
    const { code, stdout, stderr } = await runScript(
      script,
      { ...process.env, APTIX_URL: `http://127.0.0.1:${port}` },
      SCRIPT_TIMEOUT_MS,
    );
    const log = await readFile(join(dir, "aptix.log"), "utf8").catch(() => "");
    const lines = stdout.trim().split("\n");
    const turn = lines.find((line) => line.startsWith("{"));
    expect([code, turn && JSON.parse(turn)], `${stdout}\n${stderr}\n${log}`).toEqual([
      0,
      { status: "completed", error: null },
    ]);
    expect(Number(lines.at(-1))).toBeGreaterThanOrEqual(1);
  });
});

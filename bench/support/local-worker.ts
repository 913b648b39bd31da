// Starts the Worker under `wrangler dev` as `npm start` would (through `npm run dev`, or through `npm start` itself),
// but in a throw-away state directory and on free ports, for the browser tests, the benchmarks and the start-up test:
// migrations and the local seed applied first.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface LocalWorker {
  /** For example http://127.0.0.1:41234 */
  url: string;
  /** The workerd inspector's port (Chrome DevTools Protocol), for profiling a run. */
  inspectorPort: number;
  /** Everything wrangler printed, for a failure report. */
  output(): string;
  stop(): Promise<void>;
  /** Kills the whole process tree at once (SIGKILL), as a crash would; its state directory stays. */
  kill(): Promise<void>;
}

export interface LocalWorkerOptions {
  /** A wrangler config other than ./wrangler.toml (the benchmarks' minimal worker). */
  config?: string;
  /**
   * Auxiliary Workers' configs, run by the same `wrangler dev` (one workerd process) after `config`, its primary,
   * and reached through its service bindings. The local database is then migrated with the first of them.
   */
  auxiliary?: string[];
  /** `--var NAME:VALUE` overrides, for example LLM_BASE_URL (the primary Worker's only). */
  vars?: Record<string, string>;
  /** Apply D1 migrations and seeds/local.sql first (default true; false with a `stateDir`). */
  database?: boolean;
  /** How long to wait for /healthz (default 120 s: the first start compiles the Worker). */
  readyTimeoutMs?: number;
  /** The path that answers 200 once the worker is ready. */
  readyPath?: string;
  /**
   * wrangler's local trace collector (the local explorer's observability, on by default, as `npm start` has it):
   * false starts wrangler dev with X_LOCAL_OBSERVABILITY=false.
   */
  localObservability?: boolean;
  /**
   * Start as a user does, `npm start -- <flags>` (scripts/start.mjs: its port check, its migrations and seed, then
   * wrangler dev), instead of migrating here and running `npm run dev`; `database` is then not used.
   */
  throughNpmStart?: boolean;
  /**
   * A state directory (D1, Durable Objects' SQLite, their alarms) to keep: a later start on it finds what a killed
   * or stopped worker left (an object restarted after eviction). Not deleted by stop() (its owner deletes it);
   * migrated only when `database` says so.
   */
  stateDir?: string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Runs one wrangler command to its end; its output is in the error when it fails. */
export function runWrangler(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("wrangler", args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`wrangler ${args.join(" ")} exited ${code}:\n${output}`)),
    );
  });
}

async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`wrangler dev did not answer ${url} within ${timeoutMs} ms:\n${output()}`);
}

export async function startLocalWorker(options: LocalWorkerOptions = {}): Promise<LocalWorker> {
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), "aptix-worker-")));
  const config = ["--config", options.config ?? "wrangler.toml"];
  const auxiliary = (options.auxiliary ?? []).flatMap((path) => ["--config", path]);
  const databaseConfig = options.auxiliary?.[0] ? ["--config", options.auxiliary[0]] : config;
  const env = {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CI: "true",
    NO_COLOR: "1",
    ...(options.localObservability === false ? { X_LOCAL_OBSERVABILITY: "false" } : {}),
  };
  if (!options.throughNpmStart && (options.database ?? !options.stateDir)) {
    await runWrangler(["d1", "migrations", "apply", "DB", "--local", "--persist-to", stateDir, ...databaseConfig], env);
    await runWrangler(
      ["d1", "execute", "DB", "--local", "--persist-to", stateDir, "--file", "seeds/local.sql", ...databaseConfig],
      env,
    );
  }
  const port = await freePort();
  const inspectorPort = await freePort();
  const vars = Object.entries(options.vars ?? {}).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  // `npm start`, or `npm run dev`: the very wrangler dev `npm start` runs, with its environment (no Request.cf fetch).
  const child = spawn(
    "npm",
    [
      "run",
      "--silent",
      options.throughNpmStart ? "start" : "dev",
      "--",
      ...config,
      ...auxiliary,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      stateDir,
      "--show-interactive-dev-session=false",
      ...vars,
    ],
    { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
    if (!options.stateDir) await rm(stateDir, { recursive: true, force: true });
  };
  const kill = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-child.pid, "SIGKILL");
    await exited;
  };
  try {
    await waitUntilReady(
      `${url}${options.readyPath ?? "/healthz"}`,
      child,
      options.readyTimeoutMs ?? 120_000,
      () => output,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, inspectorPort, output: () => output, stop, kill };
}

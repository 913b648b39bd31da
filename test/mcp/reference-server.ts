// The MCP reference server, @modelcontextprotocol/server-everything, started in its Streamable HTTP mode on a
// free loopback port (`PORT=... node <its dist/index.js> streamableHttp`): for the test setup, the browser
// tests and bench:mcp. No one here wrote it.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "../../bench/support/local-worker.ts";

const ENTRY = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

/** Starts the server and resolves once it answers; `stop()` ends it. */
export async function startEverythingServer(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [ENTRY, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server-everything exited ${child.exitCode}:\n${output}`);
    try {
      await fetch(url, { method: "GET" });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`server-everything did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

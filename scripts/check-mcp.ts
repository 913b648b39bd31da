// npm run check:mcp — the agent's MCP door (/mcp) checked from outside by tools no one here wrote, against the
// Worker under `wrangler dev` as `npm start` serves it (the offline demo model, the local dev-key):
//   1. @modelcontextprotocol/inspector-cli: tools/list, then start_session and send_message through tools/call;
//   2. the official conformance suite, `@modelcontextprotocol/conformance server`, whose failures must be
//      exactly those of mcp-conformance-baseline.yml (scenarios that need the reference server's own tools,
//      prompts or features ours does not have, each with its reason).
// The conformance suite sends no Authorization header, so it talks to a local proxy that adds the dev-key and
// leaves the rest of each request as the suite wrote it.
import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import { freePort, startLocalWorker } from "../bench/support/local-worker.ts";

const KEY = "dev-key";
const ROOT = new URL("..", import.meta.url).pathname;

function run(
  command: string,
  args: string[],
  cwd: string = ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/**
 * A reverse proxy to the worker that adds the key to every request (the conformance suite has no header option)
 * and changes nothing else: the client's Host and Origin reach the worker as sent, so its DNS rebinding checks
 * see what the suite sends.
 */
async function keyedProxy(target: string): Promise<{ url: string; close(): void }> {
  const worker = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const forwarded = request(
      {
        host: worker.hostname,
        port: worker.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${KEY}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.end(String(error));
    });
    incoming.pipe(forwarded);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { url: `http://localhost:${port}`, close: () => server.close() };
}

/** The inspector CLI against /mcp with the key; its JSON answer. */
async function inspect(url: string, args: string[]): Promise<Record<string, unknown>> {
  // Run from its build directory: it finds its own package.json relative to the working directory.
  const result = await run(
    process.execPath,
    ["index.js", `${url}/mcp`, "--transport", "http", "--header", `Authorization: Bearer ${KEY}`, ...args],
    `${ROOT}node_modules/@modelcontextprotocol/inspector-cli/build`,
  );
  if (result.code !== 0) throw new Error(`inspector-cli ${args.join(" ")} failed:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`check failed: ${what}`);
  console.log(`  ✓ ${what}`);
}

const worker = await startLocalWorker();
const proxy = await keyedProxy(worker.url);
let failed = false;
try {
  console.log(`inspector-cli against ${worker.url}/mcp`);
  const listed = await inspect(worker.url, ["--method", "tools/list"]);
  const names = ((listed.tools ?? []) as { name: string }[]).map((t) => t.name).sort();
  check(
    JSON.stringify(names) ===
      JSON.stringify(["decide_approvals", "list_modes", "send_message", "start_session", "submit_tool_results"]),
    `tools/list names the five tools (${names.join(", ")})`,
  );
  const started = await inspect(worker.url, [
    "--method",
    "tools/call",
    "--tool-name",
    "start_session",
    "--tool-arg",
    "mode=general",
  ]);
  const sessionId = String((started.structuredContent as { sessionId?: string } | undefined)?.sessionId ?? "");
  check(/^[0-9a-f]{64}$/.test(sessionId), "tools/call start_session answers a session id");
  const sent = await inspect(worker.url, [
    "--method",
    "tools/call",
    "--tool-name",
    "send_message",
    "--tool-arg",
    `sessionId=${sessionId}`,
    "--tool-arg",
    "content=what modes are there?",
  ]);
  const turn = sent.structuredContent as { status?: string; text?: string } | undefined;
  check(
    turn?.status === "completed" && /offline demo model/.test(turn.text ?? ""),
    "tools/call send_message runs a turn",
  );

  console.log(`\nconformance server against ${proxy.url}/mcp (the proxy adds the key)`);
  const conformance = await run(process.execPath, [
    "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    "server",
    "--url",
    `${proxy.url}/mcp`,
    "--expected-failures",
    "mcp-conformance-baseline.yml",
    "-o",
    "test-results/conformance",
  ]);
  console.log(
    conformance.stdout
      .split("\n")
      .filter((line) => /^[✓✗~]|Total|Baseline|Unexpected|Stale|^\s+[✓✗~]/.test(line.trim()))
      .join("\n"),
  );
  check(conformance.code === 0, "the conformance suite fails exactly the scenarios of mcp-conformance-baseline.yml");
} catch (error) {
  failed = true;
  console.error(error instanceof Error ? error.message : error);
} finally {
  proxy.close();
  await worker.stop();
}
process.exit(failed ? 1 : 0);

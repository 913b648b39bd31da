// `npm run ws`, `npm run mcp:inspect` and `npm run idp:dev` take the server APTIX_URL names, as every example in the README and docs/
// does: each script is run against a small local server standing in for aptix, which records what it was asked.
import { execFile, spawn } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  upgrade: boolean;
}

const seen: Seen[] = [];
const record = (request: IncomingMessage, upgrade: boolean) =>
  seen.push({
    method: request.method ?? "",
    url: request.url ?? "",
    authorization: request.headers.authorization,
    upgrade,
  });

// A ticket for any session; a socket upgrade is recorded and refused; anything else is a JSON-RPC error.
const server = createServer((request, response) => {
  record(request, false);
  request.resume();
  if (request.url?.endsWith("/ws-ticket")) return void response.writeHead(200).end('{"ticket":"t1"}');
  response.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"stand-in"}}');
});
server.on("upgrade", (request, socket) => {
  record(request, true);
  socket.destroy();
});

let base = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Runs a script to its end (both fail against the stand-in) with APTIX_URL and the key set. */
async function runScript(args: string[]): Promise<void> {
  const env = { ...process.env, APTIX_URL: `${base}/`, APTIX_KEY: "k-test" };
  await run(process.execPath, args, { env, timeout: 30_000 }).catch(() => undefined);
}

describe("the base URL of the command-line clients", () => {
  it("npm run ws asks APTIX_URL for a ticket and opens its socket there", async () => {
    seen.length = 0;
    await runScript(["scripts/ws-client.mjs", "s1"]);
    expect(seen).toEqual([
      { method: "POST", url: "/context/sessions/s1/ws-ticket", authorization: "Bearer k-test", upgrade: false },
      { method: "GET", url: "/context/sessions/s1/ws?ticket=t1", authorization: undefined, upgrade: true },
    ]);
  });

  it("npm run mcp:inspect sends its MCP requests to APTIX_URL's /mcp with the key", async () => {
    seen.length = 0;
    await runScript(["scripts/mcp-inspect.mjs", "--method", "tools/list"]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.map((s) => [s.url, s.authorization])).toEqual(seen.map(() => ["/mcp", "Bearer k-test"]));
  });

  it("npm run mcp:inspect is the script that honours APTIX_URL", async () => {
    const { stdout } = await run("npm", ["pkg", "get", "scripts.mcp:inspect"]);
    expect(JSON.parse(stdout)).toBe("node scripts/mcp-inspect.mjs");
  });

  it("npm run idp:dev sends people back to the Worker at APTIX_URL, and nowhere else", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const idp = spawn(process.execPath, ["scripts/idp-dev.ts"], {
      env: { ...process.env, APTIX_URL: "http://localhost:8799", IDP_PORT: String(port) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        idp.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("Test OpenID provider at") && resolve());
        idp.once("exit", (code) => reject(new Error(`npm run idp:dev exited with ${code}`)));
      });
      const authorize = async (callback: string) => {
        const query = new URLSearchParams({
          client_id: "aptix-local",
          redirect_uri: callback,
          response_type: "code",
          scope: "openid",
        });
        const response = await fetch(`http://localhost:${port}/auth?${query}`, { redirect: "manual" });
        await response.body?.cancel();
        return response.status;
      };
      expect({
        asked: await authorize("http://localhost:8799/auth/callback"),
        twin: await authorize("http://127.0.0.1:8799/auth/callback"),
        default: await authorize("http://localhost:8787/auth/callback"),
      }).toEqual({ asked: 303, twin: 303, default: 400 });
    } finally {
      idp.kill();
    }
  });
});

// `npm run doctor` (scripts/doctor.mjs) against a server that answers GET /admin/health as aptix does: the table it
// prints, its exit code (0 all pass, 1 a check fails, 2 the server cannot be asked), and where it sends what.
import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const PASSING = {
  ok: true,
  routes: [
    {
      route: "default",
      provider: "openai_compatible",
      model: "gpt-4o-mini",
      ok: true,
      checks: [
        { name: "reachable", ok: true, status: 200, message: "answers" },
        { name: "key", ok: true, status: 200, message: "accepted" },
        { name: "model", ok: true, status: 200, message: "listed" },
        { name: "tools", ok: true, status: 200, message: "accepted" },
      ],
    },
  ],
};
const FAILING = {
  ok: false,
  routes: [
    {
      route: "default",
      provider: "openai_compatible",
      model: "demo",
      ok: false,
      checks: [
        { name: "reachable", ok: true, status: 200, message: "answers" },
        { name: "key", ok: true, status: 200, message: "accepted" },
        { name: "model", ok: false, status: 200, message: "not among the models it lists: gpt-4o-mini, gpt-4o" },
      ],
    },
  ],
};

let server: Server;
let url: string;
let answer: unknown = PASSING;
const asked: { path: string; authorization: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    asked.push({ path: req.url ?? "", authorization: req.headers.authorization });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function doctor(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      "node",
      ["scripts/doctor.mjs", ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("npm run doctor", () => {
  it("prints every route's checks and exits 0 when all pass, asking with dev-key by default", async () => {
    answer = PASSING;
    const { code, stdout } = await doctor(["--url", url]);
    expect(code).toBe(0);
    expect(stdout.split("\n").filter(Boolean)).toEqual([
      "ok    default  openai_compatible  gpt-4o-mini",
      "        ok    reachable  answers (200)",
      "        ok    key        accepted (200)",
      "        ok    model      listed (200)",
      "        ok    tools      accepted (200)",
      "Every route passes (1).",
    ]);
    expect(asked.at(-1)).toEqual({ path: "/admin/health", authorization: "Bearer dev-key" });
  });

  it("marks a failing check with the upstream's words and exits 1", async () => {
    answer = FAILING;
    const { code, stdout } = await doctor(["--url", url, "--key", "ak_other", "--timeout", "900"]);
    expect(code).toBe(1);
    expect(stdout).toContain("        FAIL  model      not among the models it lists: gpt-4o-mini, gpt-4o (200)");
    expect(asked.at(-1)).toEqual({ path: "/admin/health?timeoutMs=900", authorization: "Bearer ak_other" });
  });

  it("takes the server and key from APTIX_URL and APTIX_KEY", async () => {
    answer = PASSING;
    const { code } = await doctor([], { APTIX_URL: url, APTIX_KEY: "ak_env" });
    expect([code, asked.at(-1)?.authorization]).toEqual([0, "Bearer ak_env"]);
  });

  it("says to start the server, exit 2, when nothing answers on the port npm start would use", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { code, stderr } = await doctor(["--ip", "127.0.0.1", "--port", String(port)]);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(
      `npm run doctor: nothing answers at http://127.0.0.1:${port} (ECONNREFUSED): start the server first (npm start), or name it with --url.`,
    );
  });
});

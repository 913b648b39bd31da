// What a new user runs first, run as they run it: `npm run create-key` before any `npm start`, and `npm start` with
// wrangler dev flags after `--` on a fresh state directory (offline, with nothing alarming in its output), and a
// second `npm start` on the port the first one serves.
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";
import { killGroup, runToEnd } from "../fixtures/run-to-end.ts";

const run = promisify(execFile);
const dirs: string[] = [];

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "aptix-node-test-"));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A line of a JavaScript stack trace ("    at fn (file.js:1:2)"). */
const STACK_FRAME = /^\s+at\s.+(:\d+:\d+\)?|\(native\))$/m;

describe("a new user's first commands", () => {
  it("creates a key of the role asked with npm run create-key before the database was ever migrated", async () => {
    const dir = await stateDir();
    const { stdout, stderr } = await run("node", [
      "scripts/create-key.mjs",
      "--org",
      "acme",
      "--user",
      "dana",
      "--role",
      "admin",
      "--persist-to",
      dir,
    ]);
    expect(stderr).not.toMatch(STACK_FRAME);
    const key = stdout.trim().split("\n").at(-1) ?? "";
    expect(key).toMatch(/^ak_[A-Za-z0-9_-]{43}$/);
    const { stdout: rows } = await run("wrangler", [
      "d1",
      "execute",
      "DB",
      "--local",
      "--persist-to",
      dir,
      "--json",
      "--command",
      "SELECT org, user_id, scopes FROM api_keys",
    ]);
    const [result] = JSON.parse(rows) as { results: Record<string, string>[] }[];
    expect(result?.results).toEqual([{ org: "acme", user_id: "dana", scopes: '["chat","admin"]' }]);
  });
});

/** What a command that is expected to end printed and how it ended; the whole process group is killed at `timeoutMs`. */
async function runCommand(command: string, args: string[], timeoutMs: number) {
  const ended = await runToEnd(command, args, { timeoutMs, detached: true, stop: killGroup });
  if (ended.timedOut)
    throw new Error(`${command} ${args.join(" ")} did not end within ${timeoutMs} ms:\n${ended.stdout}${ended.stderr}`);
  return ended;
}

/** The webhook and the schedule the README's "Work that runs on its own" creates, read from its one sh block. */
async function readmeScheduleBodies(): Promise<{
  webhook: Record<string, unknown>;
  schedule: Record<string, unknown>;
}> {
  const readme = await readFile("README.md", "utf8");
  const section = readme.split("### 5. Work that runs on its own")[1]?.split("```sh")[1]?.split("```")[0] ?? "";
  const webhook = /context\/webhooks[\s\S]*?-d '(\{[^']+\})'/.exec(section)?.[1];
  const schedule = /context\/schedules[\s\S]*?-d "(\{[^"]*(?:\\"[^"]*)*\})"/.exec(section)?.[1];
  if (!webhook || !schedule) throw new Error("The README's schedule example has no webhook or schedule body.");
  return {
    webhook: JSON.parse(webhook) as Record<string, unknown>,
    schedule: JSON.parse(schedule.replaceAll('\\"', '"').replace("$AT", "")) as Record<string, unknown>,
  };
}

/** `found()`'s first value that is not undefined, asked every 50 ms for at most `timeoutMs`. */
async function until<T>(found: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Nothing came within ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The body limit the Worker is started with (`--var MAX_BODY_BYTES:...`): its default is 1 MiB. */
const BODY_LIMIT = 2048;

describe("npm start, as a user runs it", () => {
  let worker: LocalWorker;
  beforeAll(async () => {
    // npm start -- --ip 127.0.0.1 --port <free> --persist-to <fresh dir> ... --var MAX_BODY_BYTES:2048
    worker = await startLocalWorker({ throughNpmStart: true, vars: { MAX_BODY_BYTES: String(BODY_LIMIT) } });
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it("runs the README's schedule offline and its turn.completed reaches npm run webhooks:dev, verified", async () => {
    const { webhook, schedule } = await readmeScheduleBodies();
    const headers = { authorization: "Bearer dev-key", "content-type": "application/json" };
    const receiver = spawn(process.execPath, ["scripts/webhooks-dev.ts"], {
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let printed = "";
      receiver.stdout.on("data", (chunk: Buffer) => {
        printed += chunk.toString();
      });
      const receiverUrl = await until(() => /Webhook receiver at (http:\/\/\S+\/)/.exec(printed)?.[1]);
      receiver.kill();
      const created = await fetch(`${worker.url}/context/webhooks`, {
        method: "POST",
        headers,
        body: JSON.stringify({ ...webhook, url: receiverUrl }),
      });
      expect(created.status).toBe(201);
      const { secret } = (await created.json()) as { secret: string };
      // As the README says: the receiver starts again with the secret aptix answered (on the port it was given).
      const verifying = spawn(process.execPath, ["scripts/webhooks-dev.ts"], {
        env: { ...process.env, PORT: new URL(receiverUrl).port, WEBHOOK_SECRET: secret },
        stdio: ["ignore", "pipe", "inherit"],
      });
      try {
        let lines = "";
        verifying.stdout.on("data", (chunk: Buffer) => {
          lines += chunk.toString();
        });
        await until(() => lines.includes("Verifying signatures"));
        // Two seconds ahead rather than the README's minute: the same request, sooner.
        const at = new Date(Date.now() + 2_000).toISOString();
        const scheduled = await fetch(`${worker.url}/context/schedules`, {
          method: "POST",
          headers,
          body: JSON.stringify({ ...schedule, at }),
        });
        expect(scheduled.status).toBe(201);
        const line = await until(() => lines.split("\n").find((l) => /^\S+ turn\.completed /.test(l)), 60_000);
        expect(line).toMatch(/ turn\.completed msg_\S+ verified$/);
      } finally {
        verifying.kill();
      }
    } finally {
      receiver.kill();
    }
  }, 90_000);

  it("remembers offline: the demo model saves what it is told to remember and knows it in a new conversation", async () => {
    const headers = { authorization: "Bearer dev-key", "content-type": "application/json" };
    /** One message in a new session, as the README's curl examples send it; the turn's parsed answer. */
    const inNewSession = async (content: string) => {
      const created = await fetch(`${worker.url}/context/sessions`, { method: "POST", headers, body: "{}" });
      const { sessionId } = (await created.json()) as { sessionId: string };
      const answered = await fetch(`${worker.url}/context/sessions/${sessionId}/messages`, {
        method: "POST",
        headers,
        body: JSON.stringify({ content }),
      });
      return (await answered.json()) as { status: string; text: string; toolCalls: { name: string }[] };
    };
    const saved = await inNewSession("remember that my favourite colour is teal");
    const asked = await inNewSession("what is my favourite colour?");
    expect([saved.status, saved.toolCalls.map((c) => c.name)]).toEqual(["completed", ["memory_save"]]);
    expect(asked.text).toContain('From what you asked me to remember: "My favourite colour is teal."');
  });

  it("starts offline with no stack trace in its output", async () => {
    const health = await fetch(`${worker.url}/healthz`);
    expect(health.status).toBe(200);
    expect(worker.output()).not.toMatch(STACK_FRAME);
    expect(worker.output()).not.toMatch(/Unable to fetch the `Request\.cf` object/);
  });

  it("serves on the port given with --port", async () => {
    const ready = [...worker.output().matchAll(/Ready on (\S+)/g)].map((m) => new URL(m[1] ?? "").port);
    expect(ready).toEqual([new URL(worker.url).port]);
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
  });

  it("passes --var to the Worker", async () => {
    const response = await fetch(`${worker.url}/context/sessions`, {
      method: "POST",
      headers: { authorization: "Bearer dev-key", "content-type": "application/json" },
      body: JSON.stringify({ mode: "x".repeat(BODY_LIMIT) }),
    });
    const body = (await response.json()) as { error: { code: string } };
    expect([response.status, body.error.code]).toEqual([413, "request_too_large"]);
  });

  it("names each migration it applied once", async () => {
    const files = (await readdir("migrations")).filter((name) => name.endsWith(".sql"));
    const named = worker.output().match(/\b\d{4}_\w+\.sql\b/g) ?? [];
    const times = Object.fromEntries(files.map((file) => [file, named.filter((name) => name === file).length]));
    expect(times).toEqual(Object.fromEntries(files.map((file) => [file, 1])));
    expect(named.length).toBe(files.length);
  });

  it("refuses a second npm start on the port in use, naming it, before touching anything", async () => {
    const port = Number(new URL(worker.url).port);
    const dir = await stateDir();
    const second = await runCommand(
      "npm",
      ["start", "--silent", "--", "--ip", "127.0.0.1", `--port=${port}`, "--persist-to", dir],
      60_000,
    );
    const named = [...second.stderr.matchAll(/\bport (\d+)\b/g)].map((m) => Number(m[1]));
    const suggested = second.stderr.match(/npm start -- --port (\d+)/)?.[1];
    expect(second.code).toBe(1);
    expect(named[0]).toBe(port);
    expect(Number(suggested)).toBeGreaterThan(port);
    expect(await readdir(dir)).toEqual([]);
  });

  it("serves /openapi.json as a valid OpenAPI 3.1 document", async () => {
    const response = await fetch(`${worker.url}/openapi.json`, { headers: { authorization: "Bearer dev-key" } });
    const document = (await response.json()) as Record<string, unknown>;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect([result.valid, document.openapi]).toEqual([true, "3.1.0"]);
  });

  it("serves the /docs page and its OpenAPI UI from its own assets", async () => {
    const page = await (await fetch(`${worker.url}/docs/`)).text();
    const scripts = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(scripts).toContain("/vendor/swagger-ui/swagger-ui-bundle.js");
    for (const path of scripts.filter((p) => p.startsWith("/") && !p.startsWith("/openapi"))) {
      expect((await fetch(`${worker.url}${path}`)).status, path).toBe(200);
    }
    expect(scripts.filter((p) => /^https?:/.test(p))).toEqual([]);
  });

  it("serves the console, the admin page and /docs with their policy, which forbids framing them", async () => {
    for (const path of ["/", "/admin.html", "/docs/"]) {
      const response = await fetch(`${worker.url}${path}`);
      expect(response.headers.get("content-type"), path).toMatch(/^text\/html/);
      const directives = new Map(
        (response.headers.get("content-security-policy") ?? "")
          .split(";")
          .map((directive) => directive.trim().split(/\s+/))
          .map(([name = "", ...values]) => [name, values.join(" ")]),
      );
      expect([directives.get("frame-ancestors"), directives.get("script-src")], path).toEqual(["'none'", "'self'"]);
    }
  });
});

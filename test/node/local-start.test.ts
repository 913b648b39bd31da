// What a new user runs first, run as they run it: `npm run create-key` before any `npm start`, and
// `wrangler dev` as `npm start` starts it (npm run dev), offline, with nothing alarming in its output.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalWorker, startLocalWorker } from "../../bench/support/local-worker.ts";

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
  it("creates a key with npm run create-key before the database was ever migrated", async () => {
    const dir = await stateDir();
    const { stdout, stderr } = await run("node", [
      "scripts/create-key.mjs",
      "--org",
      "acme",
      "--user",
      "dana",
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
    expect(result?.results).toEqual([{ org: "acme", user_id: "dana", scopes: '["chat"]' }]);
  });
});

describe("wrangler dev, as npm start runs it", () => {
  let worker: LocalWorker;
  beforeAll(async () => {
    worker = await startLocalWorker();
  });
  afterAll(async () => {
    await worker?.stop();
  });

  it("starts offline with no stack trace in its output", async () => {
    const health = await fetch(`${worker.url}/healthz`);
    expect(health.status).toBe(200);
    expect(worker.output()).toContain("Ready on");
    expect(worker.output()).not.toMatch(STACK_FRAME);
    expect(worker.output()).not.toMatch(/Unable to fetch the `Request\.cf` object/);
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
});

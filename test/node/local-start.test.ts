// What a new user runs first, run as they run it: `npm run create-key` before any `npm start`, and
// `wrangler dev` as `npm start` starts it (npm run dev), offline, with nothing alarming in its output.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startLocalWorker } from "../../bench/support/local-worker.ts";

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

  it("starts wrangler dev as npm start does, offline, with no stack trace in its output", async () => {
    const worker = await startLocalWorker();
    try {
      const health = await fetch(`${worker.url}/healthz`);
      expect(health.status).toBe(200);
      expect(worker.output()).toContain("Ready on");
      expect(worker.output()).not.toMatch(STACK_FRAME);
      expect(worker.output()).not.toMatch(/Unable to fetch the `Request\.cf` object/);
    } finally {
      await worker.stop();
    }
  });
});

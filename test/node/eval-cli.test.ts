// `npm run eval`'s exit codes and outputs, driven with a fake aptix (an injected fetch) so it takes milliseconds:
// `--compare` runs both versions (pinned sessions) and writes both results side by side; `--min-pass` fails the run
// under the rate; bad usage and a malformed dataset exit 2 naming the problem.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliIo, runCli } from "../../scripts/eval-cli.ts";

/** A fake aptix: version 2 of `general` answers "Hello", version 1 (and the current, 3) answers "Goodbye". */
function fakeAptix(): CliIo["fetch"] {
  const pinned = new Map<string, number | undefined>();
  let next = 0;
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  return async (input, init) => {
    const url = new URL(String(input));
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    if (url.pathname === "/admin/modes") return json({ modes: [{ key: "general", version: 3 }] });
    if (url.pathname === "/context/sessions" && init?.method === "POST") {
      const sessionId = `s${++next}`;
      pinned.set(sessionId, body.modeVersion);
      return json({ sessionId }, 201);
    }
    const [, , , sessionId = "", what] = url.pathname.split("/");
    if (init?.method === "DELETE") return json({ sessionId, deleted: true });
    if (what === "messages") {
      const text = pinned.get(sessionId) === 2 ? "Hello" : "Goodbye";
      return json({ sessionId, status: "completed", mode: "general", text, toolCalls: [], iterations: 1 });
    }
    return json(
      { error: { message: "not found", type: "invalid_request_error", code: "not_found", param: null } },
      404,
    );
  };
}

let dir = "";
let dataset = "";
const lines: { out: string[]; err: string[] } = { out: [], err: [] };
const io = (): CliIo => {
  lines.out = [];
  lines.err = [];
  return { out: (l) => lines.out.push(l), err: (l) => lines.err.push(l), fetch: fakeAptix() };
};
const remote = ["--url", "https://aptix.example", "--key", "k"];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "aptix-eval-cli-"));
  dataset = join(dir, "cases.jsonl");
  const item = (name: string, contains: string) =>
    JSON.stringify({ name, messages: [{ role: "user", content: "hi" }], expect: { contains } });
  await writeFile(dataset, `${item("says hello", "Hello")}\n${item("answers", "o")}\n`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("npm run eval", () => {
  it("--compare runs both versions and writes both results", async () => {
    const out = join(dir, "compare.json");
    const code = await runCli(
      ["--mode", "general", "--version", "2", "--compare", "1", ...remote, "--out", out, dataset],
      io(),
    );
    expect(code).toBe(0);
    const written = JSON.parse(await readFile(out, "utf8"));
    expect(written.map((r: { version: number; passRate: number }) => [r.version, r.passRate])).toEqual([
      [2, 1],
      [1, 0.5],
    ]);
    expect(written[1].cases[0]).toMatchObject({
      name: "says hello",
      passed: false,
      failures: ['contains: "Hello" is not in the answer'],
    });
    expect(lines.out.at(-1)).toContain("| pass rate | 100% | 50% |");
  });

  it("without --version runs the current version and writes one object", async () => {
    const out = join(dir, "one.json");
    expect(await runCli(["--mode", "general", ...remote, "--out", out, dataset], io())).toBe(0);
    expect(JSON.parse(await readFile(out, "utf8"))).toMatchObject({
      mode: "general",
      version: 3,
      passed: 1,
      failed: 1,
    });
  });

  it("--min-pass exits 1 under the rate and 0 at it", async () => {
    expect(await runCli(["--mode", "general", ...remote, "--min-pass", "0.6", dataset], io())).toBe(1);
    expect(lines.err).toEqual(["The pass rate 50% is under --min-pass 60%."]);
    expect(await runCli(["--mode", "general", ...remote, "--min-pass", "0.5", dataset], io())).toBe(0);
  });

  it("exits 2 on bad usage, naming it", async () => {
    expect(await runCli(["--mode", "general", "--min-pass", "2", ...remote, dataset], io())).toBe(2);
    expect(lines.err[0]).toMatch(/^--min-pass must be a rate from 0 to 1, not "2"/);
    expect(await runCli([...remote, dataset], io())).toBe(2);
    expect(lines.err[0]).toMatch(/^--mode is required/);
  });

  it("exits 2 on a malformed dataset line, naming the line", async () => {
    const bad = join(dir, "bad.jsonl");
    await writeFile(
      bad,
      '{"name": "a", "messages": [{"role": "user", "content": "x"}], "expect": {}}\n{"name": "b"}\n',
    );
    expect(await runCli(["--mode", "general", ...remote, bad], io())).toBe(2);
    expect(lines.err).toEqual([`${bad}: line 2: messages: is required`]);
  });

  it("exits 2 for a mode the organization does not have", async () => {
    expect(await runCli(["--mode", "nope", ...remote, dataset], io())).toBe(2);
    expect(lines.err).toEqual(['There is no mode "nope" for this key\'s organization.']);
  });
});

#!/usr/bin/env node
// `npm test`: the type check and the whole suite, at the same time. The suite keeps two files running, but much of
// its time is spent waiting (on workerd, on `npm start` in the node project, on the scripted upstreams), so a 2-core
// machine has a core idle about half the time; the four type checks fill it instead of running first (about 30 s
// of every run on these machines). Either failing fails the run. Arguments go to `vitest run` as they did when the
// script was `npm run typecheck && vitest run`: `npm test -- test/session`.
import { spawn } from "node:child_process";

/** Runs `command` with its output passed through; resolves to its exit code. */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: "inherit" });
    child.once("error", () => resolve(1));
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

// What public/ needs before the type check and the Worker read it.
const vendored = await run(process.execPath, ["scripts/vendor-assets.mjs"]);
if (vendored !== 0) process.exit(vendored);

const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const typecheck = (async () => {
  for (const project of [
    [],
    ["-p", "tsconfig.node.json"],
    ["-p", "tsconfig.e2e.json"],
    ["-p", "tsconfig.public.json"],
  ]) {
    const code = await run(npx, ["tsc", "--noEmit", ...project]);
    if (code !== 0) return { code, project: project[1] ?? "tsconfig.json" };
  }
  return { code: 0 };
})();
const suite = run(npx, ["vitest", "run", ...process.argv.slice(2)]);

const [checked, tested] = await Promise.all([typecheck, suite]);
if (checked.code !== 0)
  console.error(`\nnpm test: the type check of ${checked.project} failed (its errors are above).`);
process.exit(checked.code || tested);

#!/usr/bin/env node
// `npm test`: the type check and the whole suite, at the same time. Either failing fails the run. Arguments go to
// `vitest run` as they did when the script was `npm run typecheck && vitest run`: `npm test -- test/session`.
//
// Much of the suite's time is spent waiting (on workerd, on `npm start`, on the scripted upstreams), so a 2-core
// machine has a core idle about half the time; three things fill it:
// - the four type checks run beside the suite instead of first (about 30 s of every run on these machines), and
//   check again only what changed since the last run;
// - the `node` project runs in a Vitest of its own beside the other three, once the type checks are done: its two
//   longest files each start `npm start` and mostly wait on it (test/node/restart-example.test.ts about 50 s, most
//   of it the demo's slow answer and the polls of the docs' script), and in one Vitest they held both of its
//   workers before any Workers file could start, since Vitest runs projects one after another. Its report is
//   printed when both are done;
// - the suite itself keeps two files running (vitest.config.ts).
// A run narrowed by the arguments (a file filter or `--project`) is one Vitest, as before.
import { spawn } from "node:child_process";
import { join } from "node:path";

/** Runs `command` with its output passed through, or kept (`keep`); resolves to its exit code and what it printed. */
function run(command, args, { keep = false, env = process.env } = {}) {
  return new Promise((resolve) => {
    const chunks = [];
    const child = spawn(command, args, { stdio: keep ? ["ignore", "pipe", "pipe"] : "inherit", env });
    if (keep) {
      child.stdout.on("data", (chunk) => chunks.push(chunk));
      child.stderr.on("data", (chunk) => chunks.push(chunk));
    }
    child.once("error", (error) => resolve({ code: 1, output: `${error.message}\n` }));
    child.once("close", (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString() }),
    );
  });
}

// What public/ needs before the type check and the Worker read it.
const vendored = await run(process.execPath, ["scripts/vendor-assets.mjs"]);
if (vendored.code !== 0) process.exit(vendored.code);

const npx = process.platform === "win32" ? "npx.cmd" : "npx";
const args = process.argv.slice(2);

// Each type check keeps what it learnt (`--incremental`, in .cache/ of this checkout), so the next run checks again
// only what changed and what depends on it: about 15 s of CPU instead of 45 s when little did. The errors are the
// same; a missing or stale file only costs a full check.
const typecheck = (async () => {
  for (const config of ["tsconfig.json", "tsconfig.node.json", "tsconfig.e2e.json", "tsconfig.public.json"]) {
    const info = join(".cache", "tsc", config.replace(/json$/, "tsbuildinfo"));
    const { code } = await run(npx, ["tsc", "--noEmit", "-p", config, "--incremental", "--tsBuildInfoFile", info]);
    if (code !== 0) return { code, project: config };
  }
  return { code: 0 };
})();

// A bare word is a file filter (or an option's value: a single Vitest is right for both).
const narrowed = args.some((arg) => !arg.startsWith("-") || arg === "--project" || arg.startsWith("--project="));
/** The node project's copy of the arguments: a report file asked for is written beside the other, as `<name>.node.<ext>`. */
const nodeArgs = args.map((arg) =>
  /^--outputFile(\.\w+)?=/.test(arg) ? arg.replace(/(\.[^./=]*)?$/, (ext) => `.node${ext}`) : arg,
);
const [checked, ...suites] = await Promise.all([
  typecheck,
  ...(narrowed
    ? [run(npx, ["vitest", "run", ...args])]
    : [
        run(npx, ["vitest", "run", "--project", "!node", ...args]),
        // After the type checks, whatever they found: started with them, its two `npm start`s, the type check, and
        // the other Vitest's own start (its upstreams, identity providers and MCP servers, two workerd) all wanted
        // the CPU at once, and on a loaded machine `npm run create-key` in local-start.test.ts outlasted its 120 s.
        // Colours as the terminal would have had them, though the output is kept until the end.
        typecheck.then(() =>
          run(npx, ["vitest", "run", "--project", "node", ...nodeArgs], {
            keep: true,
            env: process.stdout.isTTY ? { ...process.env, FORCE_COLOR: "1" } : process.env,
          }),
        ),
      ]),
]);
const [suite, nodeSuite] = suites;
if (nodeSuite) process.stdout.write(`\nThe node project, run beside the others:\n${nodeSuite.output}`);
if (checked.code !== 0)
  console.error(`\nnpm test: the type check of ${checked.project} failed (its errors are above).`);
if (nodeSuite && nodeSuite.code !== 0) console.error("\nnpm test: the node project failed (its report is just above).");
process.exit(checked.code || suite.code || nodeSuite?.code || 0);

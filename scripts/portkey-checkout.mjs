#!/usr/bin/env node
// Makes a checkout of Portkey's AI gateway (github.com/Portkey-AI/gateway) for bench:passthrough's optional peer
// (PORTKEY_GATEWAY_DIR, docs/performance.md#beside-portkey), outside this repository: nothing of Portkey's is vendored.
// Usage: node scripts/portkey-checkout.mjs <repository> <dir>
// <repository> is a local git directory (bare or not: its HEAD is archived, without the cookbook's notebooks, which
// the Worker does not need and a partial mirror may lack) or a URL (cloned, depth 1). Then its runtime dependencies
// are installed in <dir> with NODE_ENV=production npm ci: its postinstall (patch-package) runs, its prepare script
// skips husky, and its dev tooling (its own wrangler among it) is left out, the bench running it with ours.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { resolve } from "node:path";

const [source, target] = process.argv.slice(2);
if (!source || !target) {
  console.error("Usage: node scripts/portkey-checkout.mjs <repository: a local git directory or a URL> <dir>");
  process.exit(2);
}
const dir = resolve(target);
if (existsSync(dir) && readdirSync(dir).length > 0) {
  console.error(`${dir} is not empty: name a new directory.`);
  process.exit(2);
}

/** Runs `command` to its end with its output shown; rejects unless it exits 0. */
function run(command, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: "inherit", ...options });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolvePromise() : reject(new Error(`${command} ${args.join(" ")} exited ${code}`)),
    );
  });
}

/** `git archive` of the local repository's HEAD, unpacked into `dir` by tar. */
function archive(repository) {
  return new Promise((resolvePromise, reject) => {
    const git = spawn("git", ["-C", repository, "archive", "--format=tar", "HEAD", "--", ".", ":(exclude)cookbook"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const tar = spawn("tar", ["-x", "-C", dir], { stdio: ["pipe", "inherit", "inherit"] });
    git.stdout.pipe(tar.stdin);
    let pending = 2;
    const exited = (name) => (code) => {
      if (code !== 0) reject(new Error(`${name} exited ${code}`));
      else if (--pending === 0) resolvePromise();
    };
    git.once("error", reject);
    tar.once("error", reject);
    git.once("exit", exited("git archive"));
    tar.once("exit", exited("tar"));
  });
}

try {
  if (existsSync(source)) {
    mkdirSync(dir, { recursive: true });
    await archive(resolve(source));
    await run("git", ["-C", resolve(source), "log", "-1", `--format=Archived commit %H (%cs) into ${dir}`]);
  } else {
    await run("git", ["clone", "--depth", "1", source, dir]);
  }
  await run("npm", ["ci", "--no-audit", "--no-fund"], {
    cwd: dir,
    env: { ...process.env, NODE_ENV: "production", HUSKY: "0" },
  });
  console.log(`\nReady: PORTKEY_GATEWAY_DIR=${dir} npm run bench:passthrough`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}

#!/usr/bin/env node
// npm run deploy [-- --env staging|production] (default production): the static assets copied into public/vendor/,
// the config and bundle checked (check:deploy), the D1 migrations applied to the environment's remote database,
// then `wrangler deploy`. Migrations go first: a Worker never runs against tables it does not find. docs/deploy.md.
import { execFileSync } from "node:child_process";

const args = process.argv.slice(2);
const at = args.indexOf("--env");
const env = at >= 0 ? args[at + 1] : "production";
if (!env || env.startsWith("-")) {
  console.error("npm run deploy -- --env <staging|production>");
  process.exit(2);
}
const step = (title, command, commandArgs) => {
  console.log(`\n== ${title}: ${command} ${commandArgs.join(" ")}`);
  execFileSync(command, commandArgs, { stdio: "inherit" });
};
step("assets", "node", ["scripts/vendor-assets.mjs"]);
step("checks", "node", ["scripts/check-deploy.ts"]);
step("migrations", "wrangler", ["d1", "migrations", "apply", "DB", "--remote", "--env", env]);
step("deploy", "wrangler", ["deploy", "--env", env]);

// The `wrangler dev` that `npm start` and `npm run dev` run: the Worker on this machine, offline (its placeholder
// Request.cf instead of one fetched from Cloudflare, no Workers AI model), answering only to loopback host names, MCP
// servers and orgs' routes allowed over http: on loopback, and a development SECRETS_KEY (orgs' provider keys stored
// locally are sealed with it; a deployment sets its own with `wrangler secret put SECRETS_KEY`). The arguments given after `--` come after these, untouched, so every
// wrangler dev flag works and a `--var` of theirs wins. Ctrl-C stops wrangler; its exit code becomes ours.
import { spawn } from "node:child_process";

/** The vars the local server always gets (a `--var` given after `--` wins). */
export const LOCAL_DEV_VARS = {
  WORKERS_AI_MODEL: "",
  MCP_ALLOW_HTTP_LOOPBACK: "true",
  WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
  ALLOWED_HOSTS: "localhost,127.0.0.1,[::1]",
  SECRETS_KEY: "local-development-only-secrets-key-never-deployed",
};

/** What the local server always gets, before the arguments given. */
export const LOCAL_DEV_ARGS = [
  "dev",
  "--local",
  ...Object.entries(LOCAL_DEV_VARS).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
];

/** Passed on to wrangler: a terminal's Ctrl-C reaches it anyway, a `kill` of this process only through us. */
const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Runs wrangler dev with `args` after the local flags until it ends, then ends this process as wrangler ended. */
export function runWranglerDev(args) {
  const child = spawn("wrangler", [...LOCAL_DEV_ARGS, ...args], {
    stdio: "inherit",
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.once("error", (error) => {
    console.error(`Could not run wrangler dev: ${error.message}. Run it through npm (npm start), after npm install.`);
    process.exit(1);
  });
  child.once("exit", (code, signal) => {
    for (const name of FORWARDED_SIGNALS) process.off(name, forward);
    // Ended by a signal: end the same way, so whoever started us (npm, a shell) sees what happened to wrangler.
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

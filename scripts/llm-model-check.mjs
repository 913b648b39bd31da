// The check `npm start` makes before wrangler dev starts: a real upstream (LLM_BASE_URL) names its model
// (LLM_MODEL). Without it `default` sends the placeholder `demo`, which a provider answers with 404 model_not_found
// on every agent turn (issue 41). (`npm run dev`, wrangler dev alone as the benchmarks start it, does not check.)
// The vars are read where wrangler dev reads them, last wins as there:
// wrangler.toml's [vars], then .dev.vars (or, without it, .env and, with CLOUDFLARE_INCLUDE_PROCESS_ENV=true, the
// environment), then each `--var NAME:VALUE` (ours first, the user's after).
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";

/** The LLM_MODEL default of src/settings.ts: a placeholder no provider serves. */
const PLACEHOLDER_MODEL = "demo";

/** NAME=VALUE lines of a .dev.vars or .env file (quotes taken off; comments and blank lines skipped). */
export function parseDotVars(text) {
  const vars = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const [, name, raw] = match;
    const quoted = /^(["'`])(.*)\1$/.exec(raw);
    vars[name] = quoted ? quoted[2] : raw.replace(/\s+#.*$/, "");
  }
  return vars;
}

/** `NAME = "value"` lines of wrangler.toml's [vars] table (or [env.<env>.vars] with --env), string values only. */
export function tomlVars(text, env) {
  const table = env ? `[env.${env}.vars]` : "[vars]";
  const vars = {};
  let inside = false;
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.startsWith("[")) inside = trimmed === table;
    else if (inside) {
      const match = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"]*)"/.exec(trimmed);
      if (match) vars[match[1]] = match[2];
    }
  }
  return vars;
}

/** The value of each `--var NAME:VALUE` among wrangler dev's arguments, in order (a later one wins). */
export function flagVars(args) {
  const vars = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = arg === "--var" ? args[++i] : arg.startsWith("--var=") ? arg.slice("--var=".length) : undefined;
    // wrangler takes several after one --var too (`--var A:1 B:2`): each following word with a colon and no dashes.
    const values = value === undefined ? [] : [value];
    if (arg === "--var")
      while (args[i + 1] && !args[i + 1].startsWith("-") && args[i + 1].includes(":")) values.push(args[++i]);
    for (const pair of values) {
      const colon = pair.indexOf(":");
      if (colon > 0) vars[pair.slice(0, colon)] = pair.slice(colon + 1);
    }
  }
  return vars;
}

/**
 * LLM_BASE_URL and LLM_MODEL as wrangler dev will give them to the Worker started with `args` from `cwd`, with
 * `localVars` (the --var flags scripts/wrangler-dev.mjs puts first) and `processEnv` (read only where wrangler reads it).
 */
export function llmVars(args, { cwd = process.cwd(), processEnv = process.env, localVars = {} } = {}) {
  const { values } = parseArgs({
    args,
    strict: false,
    allowPositionals: true,
    options: { config: { type: "string", short: "c" }, env: { type: "string", short: "e" } },
  });
  const config = resolve(cwd, typeof values.config === "string" ? values.config : "wrangler.toml");
  const env = typeof values.env === "string" ? values.env : undefined;
  const dir = dirname(config);
  const read = (path) => (existsSync(path) ? readFileSync(path, "utf8") : undefined);
  const toml = read(config);
  const devVars = read(resolve(dir, env ? `.dev.vars.${env}` : ".dev.vars")) ?? read(resolve(dir, ".dev.vars"));
  let fileVars = {};
  if (devVars !== undefined) fileVars = parseDotVars(devVars);
  else if (processEnv.CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV !== "false") {
    const envFiles = env ? [".env", `.env.${env}`, ".env.local", `.env.${env}.local`] : [".env", ".env.local"];
    fileVars = Object.assign(
      processEnv.CLOUDFLARE_INCLUDE_PROCESS_ENV === "true" ? { ...processEnv } : {},
      ...envFiles.map((name) => parseDotVars(read(resolve(dir, name)) ?? "")),
    );
  }
  const all = {
    ...(toml === undefined ? {} : tomlVars(toml, env)),
    ...fileVars,
    ...flagVars(Object.entries(localVars).flatMap(([name, value]) => ["--var", `${name}:${value}`])),
    ...flagVars(args),
  };
  return { baseUrl: (all.LLM_BASE_URL ?? "").trim(), model: (all.LLM_MODEL ?? "").trim() };
}

/** The one line to print when a real upstream is set without its model, or null when the set-up is sound. */
export function missingModelProblem({ baseUrl, model }, command = "npm start") {
  if (baseUrl === "" || (model !== "" && model !== PLACEHOLDER_MODEL)) return null;
  const shown = model === "" ? "is not set" : `is the placeholder "${PLACEHOLDER_MODEL}"`;
  const url = withoutCredentials(baseUrl);
  return `${command}: LLM_BASE_URL is set (${url}) but LLM_MODEL ${shown}: add --var LLM_MODEL:<a model the provider serves> (list them: curl -H "Authorization: Bearer $LLM_API_KEY" ${url}/models); then npm run doctor checks the set-up.`;
}

/** The URL without any `user:pass@` in it (printed lines never carry credentials), as the Worker's shownUrl does. */
function withoutCredentials(url) {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString().replace(/\/+$/, "");
  } catch {
    return url.replace(/\/\/[^/@]*@/, "//");
  }
}

/** Ends this process (exit 2) with that line when the Worker would start with an upstream and no model. */
export function exitUnlessModelNamed(args, command, localVars) {
  const problem = missingModelProblem(llmVars(args, { localVars }), command);
  if (problem) {
    console.error(problem);
    process.exit(2);
  }
}

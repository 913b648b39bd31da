// The local D1 database as `npm start` and `npm run db:local` prepare it: wrangler applies the migrations (its own
// d1_migrations table, so `wrangler d1 migrations list` agrees) and seeds/local.sql, and this reports it in a few
// lines, each migration it applied named once, instead of wrangler's table of all of them after every one. What
// wrangler writes to stderr is always shown, and when a step fails, everything it printed, in its order.
import { spawn } from "node:child_process";
import { parseArgs } from "node:util";

export const SEED_FILE = "seeds/local.sql";

/**
 * The database wrangler dev's arguments point at (its --config, --env and --persist-to), as arguments for the d1
 * commands, and where its state lives, for the summary.
 */
export function databaseTarget(args) {
  const { values } = parseArgs({
    args,
    strict: false,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      env: { type: "string", short: "e" },
      "persist-to": { type: "string" },
    },
  });
  // Non-strict parsing keeps every other flag too (--var, --port...): take only these three.
  const named = ["config", "env", "persist-to"].filter((name) => typeof values[name] === "string");
  return {
    args: named.flatMap((name) => [`--${name}`, String(values[name])]),
    stateDir: typeof values["persist-to"] === "string" ? values["persist-to"] : ".wrangler/state",
  };
}

/**
 * Runs wrangler with what it prints kept: resolves with its exit code, its stdout, its stderr, and both as they came
 * (for a failure, in the order wrangler printed them).
 */
function wrangler(args) {
  return new Promise((resolve, reject) => {
    const child = spawn("wrangler", args, { stdio: ["ignore", "pipe", "pipe"] });
    const printed = { stdout: "", stderr: "", all: "" };
    for (const stream of ["stdout", "stderr"]) {
      child[stream].on("data", (chunk) => {
        printed[stream] += chunk.toString();
        printed.all += chunk.toString();
      });
    }
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code: code ?? 1, signal, ...printed }));
  });
}

/** Shows what a failed step printed, all of it, and which step failed; returns its exit code. */
function failed(step, what, where) {
  process.stderr.write(step.all);
  console.error(`${where}: ${what} failed (exit ${step.signal ?? step.code}).`);
  return step.code;
}

/** The migration files wrangler's output names (a table row each, repeated in every table it prints), in order, once. */
export function migrationNames(output) {
  return [...new Set(output.match(/[\w.-]+\.sql\b/g) ?? [])];
}

/**
 * Applies the migrations and the seed to the local database `args` (wrangler dev's arguments) point at, printing a
 * summary. Resolves with 0, or with the failing step's exit code after printing all it said.
 */
export async function prepareLocalDatabase(args) {
  const target = databaseTarget(args);
  const where = `Local D1 database (${target.stateDir})`;

  const migrations = await wrangler(["d1", "migrations", "apply", "DB", "--local", ...target.args]);
  if (migrations.code !== 0) return failed(migrations, "applying the migrations", where);
  // A warning on a step that worked is shown all the same.
  process.stderr.write(migrations.stderr);
  const applied = migrationNames(migrations.stdout);
  if (applied.length > 0) {
    console.log(`${where}: applied ${applied.length} migration${applied.length === 1 ? "" : "s"}:`);
    for (const name of applied) console.log(`  ${name}`);
  } else if (migrations.stdout.includes("No migrations to apply")) {
    console.log(`${where}: migrations up to date, none to apply.`);
  } else {
    // Neither a migration named nor "nothing to apply": a wrangler whose output this does not know; show all of it.
    process.stdout.write(migrations.stdout);
  }

  const seed = await wrangler(["d1", "execute", "DB", "--local", ...target.args, "--file", SEED_FILE]);
  if (seed.code !== 0) return failed(seed, `executing ${SEED_FILE}`, where);
  process.stderr.write(seed.stderr);
  console.log(`${where}: ${SEED_FILE} executed (the local key dev-key).`);
  return 0;
}

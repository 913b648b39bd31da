// Wrangler configs as the benchmarks run them: copies in a temporary directory with absolute paths, ours with a
// per-key model call limit (MODEL_CALL_LIMITER) no benchmark reaches, and the Worker's modules and static
// assets frozen for the run.
import { access, cp, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { LOCAL_DEV_VARS } from "../../scripts/wrangler-dev.mjs";

/** The limit the copy gives MODEL_CALL_LIMITER: a benchmark measures the Worker, not the limit. */
export const BENCH_MODEL_CALL_LIMIT = 1_000_000_000;

/**
 * src/, public/ and tsconfig.json (which the bundler reads) copied into `dir` once, with node_modules linked
 * beside them; returns the copy's root. wrangler dev watches the Worker's modules and its assets directory and
 * restarts the Worker when one changes, failing the requests in flight ("Your worker restarted mid-request"):
 * the copy keeps edits made to the checkout during a run out of the run.
 */
export async function sourceSnapshot(dir: string): Promise<string> {
  const root = resolve(".");
  const snapshot = join(dir, "aptix-source");
  const exists = await access(snapshot).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await cp(join(root, "src"), join(snapshot, "src"), { recursive: true });
    await cp(join(root, "public"), join(snapshot, "public"), { recursive: true });
    await cp(join(root, "tsconfig.json"), join(snapshot, "tsconfig.json"));
    await symlink(join(root, "node_modules"), join(snapshot, "node_modules"), "dir");
  }
  return snapshot;
}

/** `text` without its top-level table `[name]`: every line up to the next table (its comments and blank lines too). */
function withoutTable(text: string, name: string): string {
  return text.replace(new RegExp(`^\\[${name}\\]\\n(?:(?!\\[).*\\n)*`, "m"), "");
}

/** Paths in a wrangler config are relative to the config file; its copy lives elsewhere. */
function absolutePaths(text: string, from: (field: string, path: string) => string): string {
  return text.replace(
    /^(main|migrations_dir|directory) = "(.+)"$/gm,
    (_, field: string, path: string) => `${field} = ${JSON.stringify(isAbsolute(path) ? path : from(field, path))}`,
  );
}

/**
 * wrangler.toml, in `dir`, with absolute paths, a per-key limit no benchmark reaches, and `main` and the assets
 * in the copy of `sourceSnapshot`; `simulated: false` drops the rate limiter binding and the static assets
 * instead. Returns the copy's path.
 */
export async function benchConfig(dir: string, simulated: boolean): Promise<string> {
  const root = resolve(".");
  const snapshot = await sourceSnapshot(dir);
  let text = absolutePaths(await readFile("wrangler.toml", "utf8"), (field, path) =>
    join(field === "migrations_dir" ? root : snapshot, path),
  );
  const block = /\[\[ratelimits\]\]\nname = "MODEL_CALL_LIMITER"\n[^[]*?limit = (\d+)[^\n]*\n/;
  const match = block.exec(text);
  if (!match) throw new Error("wrangler.toml has no MODEL_CALL_LIMITER block the benchmark understands");
  text = text.replace(block, simulated ? match[0].replace(/limit = \d+/, `limit = ${BENCH_MODEL_CALL_LIMIT}`) : "");
  if (!simulated) text = withoutTable(text, "assets");
  const path = join(dir, simulated ? "wrangler.toml" : "wrangler.no-simulators.toml");
  await writeFile(path, text);
  return path;
}

/**
 * Another wrangler config (`config`, relative to the checkout) copied into `dir` with absolute paths, its assets
 * directory pointing at the copy of public/ in `sourceSnapshot`. Returns the copy's path.
 */
export async function snapshotAssetsConfig(dir: string, config: string): Promise<string> {
  const snapshot = await sourceSnapshot(dir);
  const base = dirname(resolve(config));
  const text = absolutePaths(await readFile(config, "utf8"), (field, path) => {
    const absolute = resolve(base, path);
    if (field !== "directory") return absolute;
    if (absolute !== resolve("public")) throw new Error(`${config}: assets other than ./public are not copied`);
    return join(snapshot, "public");
  });
  const path = join(dir, config.replaceAll("/", "_"));
  await writeFile(path, text);
  return path;
}

/** The Workers bench/tracing-pair-router.wrangler.toml binds, by their `x-bench-worker`. */
const PAIR_NAMES = { a: "aptix-bench-a", b: "aptix-bench-b" } as const;

/**
 * Two copies of ours (`benchConfig(dir, true)`) for one `wrangler dev` behind bench/tracing-pair-router.ts: named as
 * the router binds them, each with its own vars in a [vars] table, as npm start's local vars and `vars` (a `--var`
 * reaches the primary Worker only), and without the Workers AI binding (remote, which `--local` turns off for the
 * primary only; the local server has no Workers AI model anyway). Returns the router's config and the two copies'.
 */
export async function pairConfigs(
  dir: string,
  vars: Record<keyof typeof PAIR_NAMES, Record<string, string>>,
): Promise<{ router: string; workers: [string, string] }> {
  const ours = await readFile(await benchConfig(dir, true), "utf8");
  if (/^\[vars\]$/m.test(ours)) throw new Error("wrangler.toml has a [vars] table: the pair's copies would get two");
  const copy = async (name: string, own: Record<string, string>) => {
    const table = Object.entries({ ...LOCAL_DEV_VARS, ...own }).map(
      ([key, value]) => `${key} = ${JSON.stringify(value)}`,
    );
    const text = withoutTable(ours, "ai")
      .replace(/^name = "aptix-edge"$/m, `name = "${name}"`)
      .concat(`\n[vars]\n${table.join("\n")}\n`);
    if (!text.includes(`name = "${name}"`)) throw new Error("wrangler.toml's name is not the one the pair renames");
    const path = join(dir, `${name}.wrangler.toml`);
    await writeFile(path, text);
    return path;
  };
  return {
    router: await snapshotAssetsConfig(dir, "bench/tracing-pair-router.wrangler.toml"),
    workers: [await copy(PAIR_NAMES.a, vars.a), await copy(PAIR_NAMES.b, vars.b)],
  };
}

/**
 * A peer's config (bench/peers/<file>, an Agents SDK peer), copied into `dir` with `prompt` as SYSTEM_PROMPT and its
 * `main` in a copy of bench/peers beside `sourceSnapshot`'s src/ (a peer imports src/observability/op-counts.ts), so
 * an edit of the checkout during a run does not restart the peer either.
 */
export async function peerConfig(dir: string, file: string, prompt: string): Promise<string> {
  const peers = join(await sourceSnapshot(dir), "bench", "peers");
  const copied = await access(peers).then(
    () => true,
    () => false,
  );
  if (!copied) await cp(resolve("bench/peers"), peers, { recursive: true });
  const text = (await readFile(resolve("bench/peers", file), "utf8"))
    .replace(/^main = "(.+)"$/m, (_, main: string) => `main = ${JSON.stringify(join(peers, main))}`)
    // A JSON string is a TOML basic string.
    .replace(/^SYSTEM_PROMPT = .*$/m, () => `SYSTEM_PROMPT = ${JSON.stringify(prompt)}`);
  const path = join(dir, file);
  await writeFile(path, text);
  return path;
}

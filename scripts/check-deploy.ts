// npm run check:deploy (run by .ci/run): what `wrangler deploy` would ship, checked before anyone deploys it.
// 1. The config: a compatibility_date; no placeholder ids in a non-local environment (the top level is what
//    `npm start` and the tests run, with the local placeholder database id); no secret in any [vars].
// 2. The bundle: `wrangler deploy --dry-run` into a temporary folder, for the top level and each environment;
//    its size printed, raw and gzipped, and refused past a budget well under the platform's limit.
// 3. The static assets (public/, with the vendored libraries): their count and largest file printed, and refused
//    past the platform's limits (20,000 files, 25 MiB a file).
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { experimental_readRawConfig } from "wrangler";

/** The Worker's gzipped size may not pass this (Cloudflare's limits: 3 MiB on the free plan, 10 MiB paid). */
export const GZIP_BUDGET_BYTES = 1024 * 1024;

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** Workers static assets' limits: files a deployment, and bytes a file. */
export const ASSET_LIMITS = { files: 20_000, fileBytes: 25 * 1024 * 1024 };

/** What is wrong with a set of static assets (path and size of each) for a deploy; empty when nothing is. */
export function assetProblems(files: { path: string; bytes: number }[]): string[] {
  const problems: string[] = [];
  if (files.length > ASSET_LIMITS.files) {
    problems.push(`the static assets are ${files.length} files, over the limit of ${ASSET_LIMITS.files}`);
  }
  for (const file of files) {
    if (file.bytes > ASSET_LIMITS.fileBytes) {
      problems.push(
        `the static asset ${file.path} is ${kib(file.bytes)}, over the limit of ${kib(ASSET_LIMITS.fileBytes)}`,
      );
    }
  }
  return problems;
}

/** Every file under `dir` that would be uploaded as an asset (wrangler skips _headers, _redirects, dotfiles). */
async function assetFiles(dir: string): Promise<{ path: string; bytes: number }[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter(
    (e) => e.isFile() && !e.name.startsWith(".") && e.name !== "_headers" && e.name !== "_redirects",
  );
  return Promise.all(
    files.map(async (e) => {
      const path = join(e.parentPath, e.name);
      return { path, bytes: (await stat(path)).size };
    }),
  );
}

/** A var whose name says it holds a credential. */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?$/;
/** An id nobody could deploy with: all zeros, or a fill-me-in marker. */
const PLACEHOLDER = /^(0{8}-0{4}-[0-9]0{3}-[0-9]0{3}-0{12}|.*(REPLACE|CHANGE|TODO|<|xxxx).*)$/i;

interface RawSection {
  compatibility_date?: string;
  vars?: Record<string, unknown>;
  d1_databases?: { binding: string; database_id?: string }[];
  kv_namespaces?: { binding: string; id?: string }[];
}

interface RawConfig extends RawSection {
  env?: Record<string, RawSection>;
}

/** What is wrong with a config for a deploy; empty when nothing is. */
export function configProblems(config: RawConfig): string[] {
  const problems: string[] = [];
  if (!config.compatibility_date) problems.push("the config has no compatibility_date");
  const sections: [string, RawSection][] = [
    ["the top level", config],
    ...Object.entries(config.env ?? {}).map(([name, env]): [string, RawSection] => [`[env.${name}]`, env]),
  ];
  for (const [where, section] of sections) {
    for (const [name, value] of Object.entries(section.vars ?? {})) {
      if (SECRET_NAME.test(name) && typeof value === "string" && value !== "") {
        problems.push(
          `${where} sets ${name} in [vars]: a credential belongs in a secret (wrangler secret put ${name})`,
        );
      }
    }
    if (section === config) continue;
    for (const database of section.d1_databases ?? []) {
      if (database.database_id && PLACEHOLDER.test(database.database_id)) {
        problems.push(
          `${where} has the placeholder id ${database.database_id} for ${database.binding}: put the real one (wrangler d1 create)`,
        );
      }
    }
    for (const namespace of section.kv_namespaces ?? []) {
      if (namespace.id && PLACEHOLDER.test(namespace.id)) {
        problems.push(`${where} has the placeholder id ${namespace.id} for ${namespace.binding}`);
      }
    }
  }
  return problems;
}

const run = promisify(execFile);

/** Bundles the Worker as `wrangler deploy` would (nothing is uploaded) and measures it. */
async function bundleSize(env: string | null): Promise<{ raw: number; gzip: number }> {
  const dir = await mkdtemp(join(tmpdir(), "aptix-check-deploy-"));
  try {
    await run("wrangler", ["deploy", "--dry-run", "--outdir", dir, ...(env ? ["--env", env] : [])], {
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
      maxBuffer: 16 * 1024 * 1024,
    });
    const bundle = await readFile(join(dir, "index.js"));
    return { raw: bundle.byteLength, gzip: gzipSync(bundle).byteLength };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
  const config = rawConfig as RawConfig;
  const problems = configProblems(config);
  const targets = [null, ...Object.keys(config.env ?? {})];
  for (const env of targets) {
    const size = await bundleSize(env);
    const name = env ? `--env ${env}` : "the top level";
    console.log(`bundle (${name}): ${kib(size.raw)}, gzip ${kib(size.gzip)} (budget: gzip ${kib(GZIP_BUDGET_BYTES)})`);
    if (size.gzip > GZIP_BUDGET_BYTES) {
      problems.push(`the bundle of ${name} is ${kib(size.gzip)} gzipped, over its budget of ${kib(GZIP_BUDGET_BYTES)}`);
    }
  }
  const assets = await assetFiles("public");
  const largest = assets.reduce((a, b) => (b.bytes > a.bytes ? b : a), { path: "", bytes: 0 });
  console.log(`static assets: ${assets.length} files, the largest ${largest.path} (${kib(largest.bytes)})`);
  problems.push(...assetProblems(assets));
  if (problems.length > 0) {
    for (const problem of problems) console.error(`check:deploy: ${problem}`);
    process.exit(1);
  }
  console.log("check:deploy: the config and the bundle are fit to deploy.");
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

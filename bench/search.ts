// npm run bench:search — GET /context/search over 100,000 messages of one person (BENCH_SEARCH_MESSAGES), beside as
// many of other people's (of the same org and of another), under `wrangler dev` as `npm start` runs it. The local
// database is seeded in bulk before the Worker starts: migrations, seeds/local.sql, then one INSERT … SELECT over a
// recursive CTE for the sessions' list entries and one for the messages, each of 12 words drawn from a vocabulary of
// 5,000 made-up words (skewed: low-numbered words are common, high-numbered ones rare), half of them opening with the
// word every query of `common` looks for. The index rows are written as the session objects write them (the
// migration's triggers fill the full-text index), with the owner tokens of src/search/owner-token.ts.
// Then each query is asked BENCH_SEARCH_REPEAT times, in turns with the others and the baseline: a common word (in about half of the
// person's messages), a middling one, an uncommon one, a rare one, a prefix, two words. Reported: each one's median and p95 in ms
// (the route's time as a client sees it), and as a ratio of a baseline measured in the same run: GET
// /context/sessions?limit=20, the person's list (one indexed D1 read) on the same Worker.
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "./support/bench-config.ts";
import { type LocalWorker, runWrangler, startLocalWorker } from "./support/local-worker.ts";
import { fixed, percentile } from "./support/stats.ts";

const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 100_000);
const REPEAT = Number(process.env.BENCH_SEARCH_REPEAT ?? 40);
/** Messages a session holds. */
const PER_SESSION = 100;
const VOCABULARY = 5_000;
const WORDS_A_MESSAGE = 12;
/** The seeded key of seeds/local.sql, and its person. */
const headers = { authorization: "Bearer dev-key" };
const ORG = "dev-org";
const USER = "dev-user";
/** Other people: half in the same org, half in another. */
const OTHERS = 100;

/** src/search/owner-token.ts's tokens (that module runs in the Workers runtime; the hash is the same here). */
const hex = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 24);
const ownerColumn = (org: string, user: string) => `o${hex(`person\n${org}\n${user}`)} g${hex(`org\n${org}`)}`;

/** A made-up word for each number: syllables, so the tokenizer keeps each one word and none is an English one. */
function vocabulary(): string[] {
  const syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "zu", "da", "fe", "gi", "ho", "ju", "bo"];
  return Array.from({ length: VOCABULARY }, (_, i) => {
    let word = "";
    let n = i + 17;
    while (n > 0) {
      word += syllables[n % syllables.length];
      n = Math.floor(n / syllables.length);
    }
    return `${word}x`;
  });
}

/** Who owns which sessions: the person's first, then the others' (a user id each, its org by the half it is in). */
function people(): { org: string; user: string }[] {
  return Array.from({ length: OTHERS }, (_, i) => ({ org: i < OTHERS / 2 ? ORG : "other-org", user: `other-${i}` }));
}

/** The seed: the sessions' list entries, then every message (the person's and as many of others'). */
function seedSql(words: string[]): string {
  const sessions = Math.ceil(MESSAGES / PER_SESSION);
  const others = people();
  const owners = Object.fromEntries([
    [USER, ownerColumn(ORG, USER)],
    ...others.map((p) => [p.user, ownerColumn(p.org, p.user)]),
  ]);
  const orgOf = Object.fromEntries([[USER, ORG], ...others.map((p) => [p.user, p.org])]);
  const sql = (text: string) => `'${text.replaceAll("'", "''")}'`;
  // A word's number: the product of two uniform draws over the vocabulary, so low numbers come up far more often.
  // (`n.i * 0`: a subquery that names the row is evaluated for each row, not once for all.)
  const draw = `(SELECT w FROM bench_words WHERE i = n.i * 0 + (abs(random()) % ${VOCABULARY}) * (abs(random()) % ${VOCABULARY}) / ${VOCABULARY})`;
  const text = [
    `CASE WHEN abs(random()) % 2 = 0 THEN ${sql(`${words[0]} `)} ELSE '' END`,
    ...Array.from({ length: WORDS_A_MESSAGE }, () => draw),
  ].join(" || ' ' || ");
  const userOfSession = `CASE WHEN i < ${sessions} THEN '${USER}' ELSE 'other-' || (i % ${OTHERS}) END`;
  // The vocabulary in a table of its own for the seed (a statement holds at most 100 KB: it cannot repeat the list).
  return `
CREATE TABLE bench_words (i INTEGER PRIMARY KEY, w TEXT NOT NULL);
INSERT INTO bench_words (i, w) SELECT key, value FROM json_each(${sql(JSON.stringify(words))});
INSERT INTO session_index (session_id, org, user_id, mode, title, updated_at)
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${2 * sessions - 1})
SELECT printf('bench-%06d', i), json_extract(${sql(JSON.stringify(orgOf))}, '$."' || ${userOfSession} || '"'),
  ${userOfSession}, 'general', printf('Session %d', i), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM n;
INSERT INTO message_index (org_id, user_id, session_id, seq, role, created_at, text, owner)
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${2 * sessions * PER_SESSION - 1})
SELECT s.org, s.user_id, s.session_id, (n.i % ${PER_SESSION}) + 1,
  CASE WHEN n.i % 2 = 0 THEN 'user' ELSE 'assistant' END, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ${text},
  json_extract(${sql(JSON.stringify(owners))}, '$."' || s.user_id || '"')
FROM n JOIN session_index s ON s.session_id = printf('bench-%06d', n.i / ${PER_SESSION});
DROP TABLE bench_words;
`;
}

/** A wrangler command as the bench's Worker sees it (no metrics, no colour). */
function wrangler(args: string[]): Promise<void> {
  return runWrangler(args, { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" });
}

/**
 * Each of `paths` asked REPEAT times, in turns (one of each, then again), so the machine's load of the moment weighs on
 * every path alike: each path's answer times in ms, and its last answer's body.
 */
async function timedInTurns(url: string, paths: string[]): Promise<{ times: number[]; body: unknown }[]> {
  const runs = paths.map(() => ({ times: [] as number[], body: null as unknown }));
  for (let i = 0; i < REPEAT; i++) {
    for (const [at, path] of paths.entries()) {
      const started = performance.now();
      const response = await fetch(`${url}${path}`, { headers });
      const body: unknown = await response.json();
      const run = runs[at];
      if (!run) continue;
      run.times.push(performance.now() - started);
      run.body = body;
      if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${JSON.stringify(body)}`);
    }
  }
  return runs;
}

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), "aptix-bench-search-"));
  const state = join(tmp, "state");
  let worker: LocalWorker | undefined;
  const stop = async () => {
    await worker?.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    void stop().then(() => process.exit(130));
  });
  try {
    const config = await benchConfig(tmp, true);
    const words = vocabulary();
    const database = ["DB", "--local", "--persist-to", state, "--config", config];
    await wrangler(["d1", "migrations", "apply", ...database]);
    await wrangler(["d1", "execute", ...database, "--file", "seeds/local.sql"]);
    const seedFile = join(tmp, "search-seed.sql");
    await writeFile(seedFile, seedSql(words));
    console.log(`Seeding ${MESSAGES} messages of one person and ${MESSAGES} of ${OTHERS} others ...`);
    const seeding = performance.now();
    await wrangler(["d1", "execute", ...database, "--file", seedFile]);
    console.log(`  seeded in ${fixed((performance.now() - seeding) / 1000, 1)} s`);
    console.log("Starting the Worker (wrangler dev) ...");
    worker = await startLocalWorker({ config, stateDir: state, database: false });
    const url = worker.url;
    // How often a word comes up: word 0 opens half the messages; word k of the rest about 12·ln(5000/k)/5000 of
    // them (word 5: some 1.7%, word 2000: 0.2%, word 4900: 0.005%, a handful).
    const queries: [string, string][] = [
      ["a common word (in half the messages)", words[0] ?? ""],
      ["a middling word (~1.7%)", words[5] ?? ""],
      ["an uncommon word (~0.2%)", words[2_000] ?? ""],
      ["a rare word (a handful)", words[4_900] ?? ""],
      ["a prefix (a middling word's first 4 letters)", (words[5] ?? "").slice(0, 4)],
      ["two words (common AND middling)", `${words[0]} ${words[5]}`],
    ];
    const paths = [
      "/context/sessions?limit=20",
      ...queries.map(([, q]) => `/context/search?q=${encodeURIComponent(q)}&limit=20`),
    ];
    // Warm-up: the Worker's first compile, the database's first reads.
    await timedInTurns(url, paths);
    const [baseline, ...searches] = await timedInTurns(url, paths);
    if (!baseline) throw new Error("no baseline");
    const base50 = percentile(baseline.times, 50);
    console.log("");
    console.log(
      `| GET /context/search (${MESSAGES} messages of the person, ${MESSAGES} of others) | results on the page | median ms | p95 ms | median ÷ list |`,
    );
    console.log("| --- | ---: | ---: | ---: | ---: |");
    console.log(
      `| GET /context/sessions?limit=20 (baseline) | | ${fixed(base50, 1)} | ${fixed(percentile(baseline.times, 95), 1)} | 1.00x |`,
    );
    for (const [i, [name, q]] of queries.entries()) {
      const run = searches[i];
      if (!run) continue;
      const count = (run.body as { results: unknown[] }).results.length;
      const p50 = percentile(run.times, 50);
      console.log(
        `| ${name}: \`${q}\` | ${count} | ${fixed(p50, 1)} | ${fixed(percentile(run.times, 95), 1)} | ${fixed(p50 / base50)}x |`,
      );
    }
    console.log("");
    console.log(
      `Each ${REPEAT} times, in turns with the others; goal: median and p95 under 50 ms. Load average (1 min): ${fixed(loadavg()[0] ?? 0, 2)} on ${cpus().length} cores.`,
    );
  } finally {
    await stop();
  }
}

await main();

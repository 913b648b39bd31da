#!/usr/bin/env node
// Creates an API key: stores only its SHA-256 in D1 (local by default, --remote for a deployment)
// and prints the key once. The local database is migrated first, so this works before the first `npm start`.
// Usage: npm run create-key -- --org acme --user dana [--role member|admin|operator] [--name ci] [--remote [--env production]] [--persist-to DIR]
// The role gives the key its scopes (docs/auth.md#roles): a member `chat`; an admin of its org `chat,admin`; an operator
// of the deployment `chat,admin,operator`.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    org: { type: "string" },
    user: { type: "string" },
    role: { type: "string", default: "member" },
    name: { type: "string", default: "" },
    remote: { type: "boolean", default: false },
    /** The wrangler environment whose database takes the key (staging, production); with --remote. */
    env: { type: "string" },
    "persist-to": { type: "string" },
  },
});

/** The scopes of each role (src/tenancy/roles.ts's ROLE_SCOPES). */
const ROLE_SCOPES = { member: ["chat"], admin: ["chat", "admin"], operator: ["chat", "admin", "operator"] };
const scopes = ROLE_SCOPES[values.role];
const problems = [];
if (!values.org) problems.push("--org is required");
if (!values.user) problems.push("--user is required");
if (!scopes) problems.push(`unknown role '${values.role}' (known: ${Object.keys(ROLE_SCOPES).join(", ")})`);
if (problems.length > 0) {
  console.error(`create-key: ${problems.join("; ")}`);
  process.exit(2);
}

const sqlText = (value) => `'${String(value).replaceAll("'", "''")}'`;
const key = `ak_${randomBytes(32).toString("base64url")}`;
const keyHash = createHash("sha256").update(key).digest("hex");
const id = randomUUID();
const sql = `INSERT INTO api_keys (id, key_hash, name, org, user_id, scopes) VALUES (${[id, keyHash, values.name, values.org, values.user, JSON.stringify(scopes)].map(sqlText).join(", ")});`;

const where = values.remote
  ? ["--remote", ...(values.env ? ["--env", values.env] : [])]
  : ["--local", ...(values["persist-to"] ? ["--persist-to", values["persist-to"]] : [])];

/** Runs wrangler quietly; on failure says what failed and what to run, without a stack trace. */
function wrangler(args, what) {
  try {
    execFileSync("wrangler", args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "true" } });
  } catch (error) {
    const said = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim().split("\n").slice(-5).join("\n");
    console.error(`create-key: ${what} failed.${said ? `\n${said}` : ""}`);
    console.error(
      values.remote
        ? "Check `wrangler whoami` and the database_id in wrangler.toml, then run `npm run create-key -- ... --remote` again."
        : "Run `npm run db:local` (it migrates and seeds the local database), then run `npm run create-key` again.",
    );
    process.exit(1);
  }
}

// A local database that was never migrated has no api_keys table yet: migrations are idempotent, apply them.
// (A remote database is migrated by the deploy, never implicitly by a key command.)
if (!values.remote) wrangler(["d1", "migrations", "apply", "DB", ...where], "Migrating the local database");
wrangler(["d1", "execute", "DB", ...where, "--command", sql], "Storing the key");

console.log(
  `Created key ${id} for org '${values.org}', user '${values.user}', role ${values.role} (scopes ${scopes.join(", ")})${values.remote ? " (remote)" : " (local)"}.`,
);
console.log("It is shown once and stored only as its SHA-256:");
console.log(key);

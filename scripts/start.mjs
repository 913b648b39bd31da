#!/usr/bin/env node
// npm start [-- <wrangler dev flags>]: the local Worker from a fresh clone, offline. Refuses a port already served
// (another npm start) before touching anything, copies the browser libraries into public/vendor/, applies the D1
// migrations and seeds/local.sql to the local database, then runs wrangler dev (scripts/wrangler-dev.mjs) with every
// flag given, e.g. `npm start -- --port 9000 --var LLM_BASE_URL:https://api.openai.com/v1`.
import { execFileSync } from "node:child_process";
import { exitUnlessPortFree } from "./dev-port.mjs";
import { prepareLocalDatabase } from "./local-database.mjs";
import { runWranglerDev } from "./wrangler-dev.mjs";

const args = process.argv.slice(2);
await exitUnlessPortFree(args, "npm start");
execFileSync(process.execPath, ["scripts/vendor-assets.mjs"], { stdio: "inherit" });
const prepared = await prepareLocalDatabase(args);
if (prepared !== 0) process.exit(prepared);
runWranglerDev(args);

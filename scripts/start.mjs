#!/usr/bin/env node
// npm start [-- <wrangler dev flags>]: the local Worker from a fresh clone, offline. Refuses an LLM_BASE_URL without
// its LLM_MODEL (scripts/llm-model-check.mjs) and a port already served (another npm start) before touching anything,
// copies the browser libraries into public/vendor/, applies the D1 migrations and seeds/local.sql to the local
// database, then runs wrangler dev (scripts/wrangler-dev.mjs) with every flag given, e.g.
// `npm start -- --port 9000 --var LLM_BASE_URL:https://api.openai.com/v1 --var LLM_MODEL:gpt-4o-mini`.
import { execFileSync } from "node:child_process";
import { exitUnlessPortFree } from "./dev-port.mjs";
import { exitUnlessModelNamed } from "./llm-model-check.mjs";
import { prepareLocalDatabase } from "./local-database.mjs";
import { LOCAL_DEV_VARS, runWranglerDev } from "./wrangler-dev.mjs";

const args = process.argv.slice(2);
exitUnlessModelNamed(args, "npm start", LOCAL_DEV_VARS);
await exitUnlessPortFree(args, "npm start");
execFileSync(process.execPath, ["scripts/vendor-assets.mjs"], { stdio: "inherit" });
const prepared = await prepareLocalDatabase(args);
if (prepared !== 0) process.exit(prepared);
runWranglerDev(args);

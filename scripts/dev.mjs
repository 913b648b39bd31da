#!/usr/bin/env node
// npm run dev [-- <wrangler dev flags>]: wrangler dev as `npm start` runs it (scripts/wrangler-dev.mjs), without
// touching the local database; refuses an LLM_BASE_URL without its LLM_MODEL and a port already served. (predev has
// copied the browser libraries.)
import { exitUnlessPortFree } from "./dev-port.mjs";
import { exitUnlessModelNamed } from "./llm-model-check.mjs";
import { LOCAL_DEV_VARS, runWranglerDev } from "./wrangler-dev.mjs";

const args = process.argv.slice(2);
exitUnlessModelNamed(args, "npm run dev", LOCAL_DEV_VARS);
await exitUnlessPortFree(args, "npm run dev");
runWranglerDev(args);

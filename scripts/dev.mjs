#!/usr/bin/env node
// npm run dev [-- <wrangler dev flags>]: wrangler dev as `npm start` runs it (scripts/wrangler-dev.mjs), without
// touching the local database; refuses a port already served. (predev has copied the browser libraries.)
import { exitUnlessPortFree } from "./dev-port.mjs";
import { runWranglerDev } from "./wrangler-dev.mjs";

const args = process.argv.slice(2);
await exitUnlessPortFree(args, "npm run dev");
runWranglerDev(args);

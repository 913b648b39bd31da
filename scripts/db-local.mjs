#!/usr/bin/env node
// npm run db:local [-- --persist-to DIR]: the local D1 database migrated and seeded as `npm start` does it
// (scripts/local-database.mjs), without starting the Worker.
import { prepareLocalDatabase } from "./local-database.mjs";

process.exitCode = await prepareLocalDatabase(process.argv.slice(2));

// Vitest setup file, run before each test file. The files of a project share one Workers runtime and isolate
// (isolate: false in vitest.config.ts), so each starts as a runtime of its own would: no Durable Object and no
// D1 row of an earlier file (reset), nothing the isolate kept between requests (forgetIsolateState), then the
// migrated, seeded database.
import { freshDatabase } from "../fixtures/database";

await freshDatabase();

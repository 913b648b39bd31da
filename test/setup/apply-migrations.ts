// Vitest setup file, run before each test file. The files of a project share one Workers runtime and isolate
// (isolate: false in vitest.config.ts), so each starts as a runtime of its own would: no Durable Object and no
// D1 row of an earlier file (reset), nothing the isolate kept between requests (forgetIsolateState), then the
// migrated, seeded database. After each test it waits for the work a test's own execution contexts left running,
// so none outlives its file (test/setup/pending-work.ts).
import { afterEach } from "vitest";
import { freshDatabase } from "../fixtures/database";
import { settlePendingWork } from "./pending-work";

await freshDatabase();
afterEach(settlePendingWork);

// Vitest setup file: every test file starts with a migrated, seeded database.
import { migrateAndSeed } from "../fixtures/database";

await migrateAndSeed();

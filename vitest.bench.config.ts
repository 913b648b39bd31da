// Benchmarks inside the Workers runtime (npm run bench:loop): the test config (the Workers plugin, the migrations,
// the scripted upstream) in vitest's bench mode, over bench/**/*.bench.ts.
import { defineConfig, mergeConfig } from "vitest/config";
import testConfig from "./vitest.config.ts";

export default defineConfig(async (configEnv) =>
  mergeConfig(await testConfig(configEnv), { test: { benchmark: { include: ["bench/**/*.bench.ts"] } } }),
);

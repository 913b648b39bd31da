// Benchmarks inside the Workers runtime (npm run bench:loop): the `workers` test project's set-up (the Workers
// plugin, the migrations, the scripted upstream, a model call limit out of reach) in vitest's bench mode.
import { defineConfig, mergeConfig } from "vitest/config";
import { workersProject } from "./vitest.config.ts";

export default defineConfig(async () =>
  mergeConfig(await workersProject({ name: "bench", include: [], upstream: true, modelCallLimit: 1_000_000_000 }), {
    test: { benchmark: { include: ["bench/**/*.bench.ts"] } },
  }),
);

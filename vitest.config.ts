// Tests run inside the Workers runtime (workerd) through @cloudflare/vitest-plugin, with real D1 and
// Durable Objects; the scripted upstream LLM runs in Node beside them (test/upstream/global-setup.ts).
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_UPSTREAM_API_KEY } from "./test/upstream/global-setup.ts";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            TEST_UPSTREAM_URL: inject("upstreamUrl"),
            LLM_BASE_URL: `${inject("upstreamUrl")}/v1`,
            LLM_API_KEY: TEST_UPSTREAM_API_KEY,
          },
          // The passthrough's per-key limit, small enough for a test to reach; each passthrough test
          // uses a key of its own (test/passthrough/harness.ts), so only the rate-limit test reaches it.
          ratelimits: { PASSTHROUGH_RATE_LIMITER: { namespace_id: "1001", simple: { limit: 5, period: 60 } } },
        },
      })),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      globalSetup: ["./test/upstream/global-setup.ts"],
      setupFiles: ["./test/setup/apply-migrations.ts"],
    },
  };
});

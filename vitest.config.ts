// Four test projects. `workers`, `traced` and `offline` run inside the Workers runtime (workerd) through
// @cloudflare/vitest-plugin, with real D1 and Durable Objects: `workers` against the scripted upstream LLM
// (started in Node beside them by test/upstream/global-setup.ts, with real OpenID providers by test/idp/) with a
// model call limit out of reach; `traced` the same, exporting its traces to a real OTLP/HTTP receiver
// (test/observability/global-setup.ts), for the tests of the traces; `offline` as `npm start` runs (no LLM_BASE_URL:
// the offline demo model) with a limit small enough for a test to reach. `node` runs the scripts a developer runs
// (create-key, wrangler dev) in Node.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import type { ProvidedContext } from "vitest";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { TEST_SECRETS_KEY } from "./test/fixtures/secrets-key.ts";
import { TEST_MCP_TOKEN } from "./test/mcp/everything-server.ts";
import { TEST_OTLP_HEADERS } from "./test/observability/otlp-headers.ts";
import { OFFLINE_MODEL_CALL_LIMIT } from "./test/offline/limit.ts";
import {
  TEST_ANTHROPIC_API_KEY,
  TEST_UPSTREAM_API_KEY,
  TEST_UPSTREAM_B_API_KEY,
} from "./test/upstream/global-setup.ts";

export interface WorkersProjectOptions {
  name: string;
  include: string[];
  exclude?: string[];
  /** Run the scripted upstream and point LLM_BASE_URL at it; false runs the offline demo model. */
  upstream: boolean;
  modelCallLimit: number;
  /** Global setups of the project's own, started after the common ones. */
  globalSetup?: string[];
  /** Bindings of the project's own, over the common ones; `inject` reads what the global setups provided. */
  bindings?: (inject: <K extends keyof ProvidedContext>(key: K) => ProvidedContext[K]) => Record<string, string>;
  /** Vitest's 5 s unless a project's tests wait longer by design. */
  testTimeout?: number;
}

export async function workersProject(options: WorkersProjectOptions): Promise<TestProjectInlineConfiguration> {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      quietMissingSourceMaps,
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        // workerd reports only what it must: not each connection a test breaks on purpose, with its native stack.
        verbose: false,
        // The AI binding is remote only: offline it is there but refuses every call. `default` does not use it
        // (WORKERS_AI_MODEL is empty, as under npm start); Workers AI routes are tested against a stand-in.
        remoteBindings: false,
        miniflare: {
          bindings: {
            WORKERS_AI_MODEL: "",
            // A lease's end (and the settles that go with it) a fifth of a second after it is granted, not a second:
            // a test that waits for the meter to have every settle waits that long (test/metering tries the default).
            METER_LEASE_MS: "200",
            TEST_MIGRATIONS: migrations,
            // The reference MCP server runs on loopback over http:, as in development.
            MCP_ALLOW_HTTP_LOOPBACK: "true",
            // Webhook receivers run on loopback over http:, as `npm run webhooks:dev` does in development.
            WEBHOOK_ALLOW_HTTP_LOOPBACK: "true",
            // The guardrail counters are written a tenth of a second after a decision (a second in a deployment).
            GUARDRAIL_COUNT_WINDOW_MS: "100",
            TEST_MCP_EVERYTHING_URL: inject("mcpEverythingUrl"),
            TEST_MCP_CONTROL_URL: inject("mcpControlUrl"),
            /** The secret a registered server's `authSecret` names in the tests. */
            MCP_TEST_TOKEN: TEST_MCP_TOKEN,
            /** The key that wraps orgs' provider keys (PUT /admin/secrets), as a deployment sets it. */
            SECRETS_KEY: TEST_SECRETS_KEY,
            ...(options.upstream
              ? {
                  TEST_UPSTREAM_URL: inject("upstreamUrl"),
                  LLM_BASE_URL: `${inject("upstreamUrl")}/v1`,
                  LLM_API_KEY: TEST_UPSTREAM_API_KEY,
                  TEST_UPSTREAM_B_URL: inject("upstreamBUrl"),
                  // The secrets model routes to the two upstreams name (`apiKeySecret`).
                  UPSTREAM_A_KEY: TEST_UPSTREAM_API_KEY,
                  UPSTREAM_B_KEY: TEST_UPSTREAM_B_API_KEY,
                  // The scripted Anthropic Messages API upstream, and its key.
                  TEST_ANTHROPIC_URL: inject("anthropicUpstreamUrl"),
                  TEST_ANTHROPIC_API_KEY: TEST_ANTHROPIC_API_KEY,
                  // Two real OpenID providers (oidc-provider) on loopback: the one sign-in tests use, and another.
                  TEST_IDP_ISSUER: inject("idpIssuer"),
                  TEST_IDP_OTHER_ISSUER: inject("idpOtherIssuer"),
                  TEST_IDP_SHORT_CODE_ISSUER: inject("idpShortCodeIssuer"),
                  TEST_ACCESS_TEAM: inject("accessTeamIssuer"),
                }
              : {
                  TEST_UPSTREAM_URL: "",
                  TEST_UPSTREAM_B_URL: "",
                  TEST_ANTHROPIC_URL: "",
                  LLM_BASE_URL: "",
                  TEST_IDP_ISSUER: "",
                  TEST_IDP_OTHER_ISSUER: "",
                  TEST_IDP_SHORT_CODE_ISSUER: "",
                }),
            // The webhook receiver runs for `workers` alone (test/webhooks/global-setup.ts).
            TEST_WEBHOOK_RECEIVER_URL: "",
            // No receiver outside `traced`, whose bindings set these (test/env.d.ts).
            TEST_OTLP_URL: "",
            TEST_OTLP_CONTROL_URL: "",
            TEST_OTLP_DOWN_URL: "",
            ...options.bindings?.(inject),
          },
          ratelimits: {
            MODEL_CALL_LIMITER: { namespace_id: "1001", simple: { limit: options.modelCallLimit, period: 60 } },
          },
        },
      })),
    ],
    test: {
      name: options.name,
      include: options.include,
      exclude: options.exclude ?? [],
      globalSetup: [
        ...(options.upstream ? ["./test/upstream/global-setup.ts", "./test/idp/global-setup.ts"] : []),
        "./test/mcp/everything-server.ts",
        ...(options.globalSetup ?? []),
      ],
      ...(options.testTimeout ? { testTimeout: options.testTimeout } : {}),
      setupFiles: ["./test/setup/apply-migrations.ts"],
      // One Workers runtime per project and worker, reused by file after file (starting one per file cost about
      // 2.5 s of every file's time). Each file still starts from fresh storage and a forgetful isolate: the setup
      // file resets both.
      isolate: false,
    },
  };
}

/**
 * Vite's warning that a package's source map names source files the package does not ship (the MCP SDK's, the
 * Agents SDK's) is true of those packages and nothing to act on here; left in, it is 60 lines of every run.
 */
const quietMissingSourceMaps = {
  name: "aptix:quiet-missing-source-maps",
  configResolved(config: { logger: { warnOnce: (message: string, options?: object) => void } }) {
    const warnOnce = config.logger.warnOnce.bind(config.logger);
    config.logger.warnOnce = (message, options) => {
      if (!message.includes("points to missing source files")) warnOnce(message, options);
    };
  },
};

export default defineConfig(async () => ({
  test: {
    // What the code under test logs is shown for a failing test only: the passing ones (many of which cause
    // failures on purpose) print nothing.
    silent: "passed-only" as const,
    // Two test files at a time (Vitest's default is one fewer than the cores: one on these 2-core machines, which
    // left a core idle while a file waited on workerd or an upstream).
    maxWorkers: 2,
    projects: [
      await workersProject({
        name: "workers",
        include: ["test/**/*.test.ts"],
        exclude: ["test/offline/**", "test/node/**", "test/observability/**"],
        upstream: true,
        modelCallLimit: 1_000_000,
        globalSetup: ["./test/webhooks/global-setup.ts"],
        bindings: (inject) => ({ TEST_WEBHOOK_RECEIVER_URL: inject("webhookReceiverUrl") }),
      }),
      await workersProject({
        name: "traced",
        include: ["test/observability/**/*.test.ts"],
        upstream: true,
        modelCallLimit: 1_000_000,
        globalSetup: ["./test/observability/global-setup.ts"],
        bindings: (inject) => ({
          OTEL_EXPORTER_OTLP_ENDPOINT: inject("otlpUrl"),
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
          OTEL_EXPORTER_OTLP_HEADERS: TEST_OTLP_HEADERS,
          OTEL_SERVICE_NAME: "aptix-edge-test",
          // Exports leave soon after each reply (the default 1000 ms would make every test wait); the batching of
          // several requests' spans into one export is tested with the default's kind of delay.
          OTEL_BSP_SCHEDULE_DELAY: "20",
          TEST_OTLP_URL: inject("otlpUrl"),
          TEST_OTLP_CONTROL_URL: inject("otlpControlUrl"),
          TEST_OTLP_DOWN_URL: inject("otlpDownUrl"),
        }),
        // A test waits up to 5 s for its exports (spansOfTrace), and must outlast the wait to show what arrived.
        testTimeout: 15_000,
      }),
      await workersProject({
        name: "offline",
        include: ["test/offline/**/*.test.ts"],
        upstream: false,
        modelCallLimit: OFFLINE_MODEL_CALL_LIMIT,
      }),
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
}));

// The agent's model router and the passthrough walk a route chain the same way (route-chain-walker.ts): one breaker
// state gives both the same candidates, the same skips and the same failovers, logged alike. The chain: `fast`,
// tripped open; `keyless`, whose secret is not set (a route failure for both, before any call); `demo`, which answers.
import { describe, expect, it } from "vitest";
import { UpstreamExchange } from "../../src/passthrough/exchange";
import { type ChainState, sendThroughChain } from "../../src/passthrough/route-chain";
import { CircuitBreaker } from "../../src/routing/circuit-breaker";
import { ChainRouter } from "../../src/routing/model-router";
import { defaultRoute, type ModelRoute } from "../../src/routing/model-routes";
import { routeChatModel } from "../../src/routing/route-models";
import { RouteTable } from "../../src/routing/route-table";
import { parseSettings } from "../../src/settings";
import { RecordingAdminLogger } from "../fixtures/recording-logger";

const breakerOptions = { failures: 3, cooldownMs: 30_000 };

function route(name: string, body: Partial<ModelRoute>): ModelRoute {
  return { ...defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null }), source: "stored", name, ...body };
}

const table = new RouteTable(
  [
    route("fast", { provider: "offline_demo", fallbacks: ["keyless", "demo"] }),
    route("keyless", {
      provider: "openai_compatible",
      baseUrl: "http://127.0.0.1:9/v1",
      apiKeySecret: "NO_SUCH_SECRET",
      model: "keyless-model",
    }),
    route("demo", { provider: "offline_demo" }),
  ],
  route("default", { provider: "offline_demo" }),
);

/** A breaker with `fast` open, and the log it writes to. */
function trippedBreaker() {
  const breaker = new CircuitBreaker(() => 1_000);
  const logger = new RecordingAdminLogger();
  for (let i = 0; i < breakerOptions.failures; i++) breaker.failed({ name: "fast" }, breakerOptions, logger);
  logger.events.length = 0;
  return { breaker, logger };
}

/** What the walk logged, as tag and fields (the texts are each failure's own). */
const walkLog = (logger: RecordingAdminLogger) => logger.events.map((e) => ({ tag: e.tag, pairs: e.pairs }));

async function throughRouter() {
  const { breaker, logger } = trippedBreaker();
  const attempts: string[] = [];
  const router = new ChainRouter({
    routes: async () => table,
    modelFor: (r, t) => routeChatModel(r, {}, 1_000, t),
    breaker,
    breakerOptions,
    logger,
    onAttempt: (a) => attempts.push(`${a.route.name}:${a.outcome}`),
  });
  const { route: served } = await router.complete("fast", {
    request: async () => ({ messages: [{ role: "user", content: "hi" }] }),
  });
  return { served: served.name, log: walkLog(logger), failedOver: attempts.filter((a) => !a.endsWith(":ok")) };
}

async function throughPassthrough() {
  const { breaker, logger } = trippedBreaker();
  const first = table.get("fast");
  if (!first) throw new Error("no route fast");
  const state: ChainState = { route: first, failed: [], attempts: [], committed: false };
  const response = await sendThroughChain({
    env: {},
    keys: table,
    routing: { first, chain: table.chain("fast"), rewritesModel: true },
    path: "/models",
    bodies: null,
    askUsage: false,
    incoming: new Headers(),
    trace: {},
    requestId: "req-one-walk",
    exchange: new UpstreamExchange(),
    state,
    breaker,
    breakerOptions,
    logger,
    redact: (text) => text,
  });
  await response.body?.cancel();
  return {
    served: state.route.name,
    log: walkLog(logger),
    failedOver: state.attempts.map((a) => `${a.route.name}:${a.outcome}`),
  };
}

describe("one chain walk for the router and the passthrough", () => {
  it("skips an open route, fails over from a broken one and logs both alike for the agent loop and the passthrough", async () => {
    const router = await throughRouter();
    const passthrough = await throughPassthrough();
    expect(router).toEqual({
      served: "demo",
      log: [
        { tag: "[ModelRouter_Skipped]", pairs: [["Routes", "fast"]] },
        {
          tag: "[ModelRouter_Failover]",
          pairs: [
            ["Route", "keyless"],
            ["Code", "model_unavailable"],
            ["Next", "demo"],
            ["AfterFirstByte", "false"],
          ],
        },
      ],
      failedOver: ["keyless:error"],
    });
    expect(passthrough).toEqual(router);
  });
});

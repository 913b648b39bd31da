// The runtime's words about a failed attempt can quote the upstream's URL, and any key in it: the passthrough's
// failover log line carries them with the secrets in play taken out, by the request's redactor.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UpstreamExchange } from "../../src/passthrough/exchange";
import { type ChainState, sendThroughChain } from "../../src/passthrough/route-chain";
import { CircuitBreaker } from "../../src/routing/circuit-breaker";
import { defaultRoute, type ModelRoute } from "../../src/routing/model-routes";
import { RouteTable } from "../../src/routing/route-table";
import { secretRedactor } from "../../src/secret-redaction";
import { parseSettings } from "../../src/settings";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { TEST_UPSTREAM_API_KEY } from "../upstream/global-setup";

function route(name: string, body: Partial<ModelRoute>): ModelRoute {
  return { ...defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null }), source: "stored", name, ...body };
}

describe("a failed attempt's log line", () => {
  it("names the runtime's failure with the route's key taken out of the URL it quotes", async () => {
    // A URL the runtime refuses to fetch, quoting it in its error: the key in its query is what must not be logged.
    const leaky = route("leaky", {
      provider: "openai_compatible",
      baseUrl: `ftp://127.0.0.1/v1?key=${TEST_UPSTREAM_API_KEY}`,
      apiKeySecret: "UPSTREAM_KEY",
      fallbacks: ["demo"],
    });
    const demo = route("demo", { provider: "offline_demo" });
    const secrets = { UPSTREAM_KEY: TEST_UPSTREAM_API_KEY };
    const table = new RouteTable([leaky, demo], demo, secrets);
    const logger = new RecordingAdminLogger();
    const state: ChainState = { route: leaky, failed: [], attempts: [], committed: false };
    const response = await sendThroughChain({
      env: {},
      keys: table,
      routing: { first: leaky, chain: [leaky, demo], rewritesModel: true },
      path: "/models",
      bodies: null,
      askUsage: false,
      incoming: new Headers(),
      trace: {},
      requestId: "req-failover-redaction",
      exchange: new UpstreamExchange(),
      state,
      breaker: new CircuitBreaker(() => 0),
      breakerOptions: { failures: 3, cooldownMs: 30_000 },
      logger,
      redact: secretRedactor({ ...env, ...secrets }, [TEST_UPSTREAM_API_KEY]),
    });
    await response.body?.cancel();
    const failover = logger.events.find((event) => event.tag === "[ModelRouter_Failover]");
    expect(failover?.message).toContain("ftp://127.0.0.1/v1?key=");
    expect(failover?.message).not.toContain(TEST_UPSTREAM_API_KEY);
  });
});

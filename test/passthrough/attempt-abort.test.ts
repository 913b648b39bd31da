// An attempt on a route with its own timeout has its own abort signal, which follows the exchange's: an exchange
// already aborted (the client gone before the attempt started) starts it aborted, so nothing is sent upstream.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ClientGone, UpstreamExchange } from "../../src/passthrough/exchange";
import { type ChainState, sendThroughChain } from "../../src/passthrough/route-chain";
import { CircuitBreaker } from "../../src/routing/circuit-breaker";
import { defaultRoute, type ModelRoute } from "../../src/routing/model-routes";
import { RouteTable } from "../../src/routing/route-table";
import { parseSettings } from "../../src/settings";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { TEST_UPSTREAM_API_KEY } from "../upstream/global-setup";

function route(timeoutMs: number | null): ModelRoute {
  return {
    ...defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null }),
    source: "stored",
    name: "own-clock",
    provider: "openai_compatible",
    baseUrl: `${env.TEST_UPSTREAM_URL}/v1`,
    apiKeySecret: "UPSTREAM_KEY",
    timeoutMs,
  };
}

/** GET /models through a one-route chain whose exchange the client already left. */
function afterClientLeft(timeoutMs: number | null): Promise<Response> {
  const first = route(timeoutMs);
  const table = new RouteTable([first], first, { UPSTREAM_KEY: TEST_UPSTREAM_API_KEY });
  const exchange = new UpstreamExchange();
  exchange.abort(new ClientGone());
  const state: ChainState = { route: first, failed: [], attempts: [], committed: false };
  return sendThroughChain({
    env: {},
    keys: table,
    routing: { first, chain: [first], rewritesModel: true },
    path: "/models",
    bodies: null,
    askUsage: false,
    incoming: new Headers(),
    trace: {},
    requestId: "req-attempt-abort",
    exchange,
    state,
    breaker: new CircuitBreaker(() => 0),
    breakerOptions: { failures: 3, cooldownMs: 30_000 },
    logger: new RecordingAdminLogger(),
    redact: (text) => text,
  });
}

describe("an attempt after the client left", () => {
  it.each([
    ["with its own timeout", 5_000],
    ["without one", null],
  ])("on a route %s sends nothing and ends with the client's going", async (_, timeoutMs) => {
    await expect(afterClientLeft(timeoutMs)).rejects.toBeInstanceOf(ClientGone);
  });
});

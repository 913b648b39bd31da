// The router a Worker or session object uses: its routes (D1, cached per isolate), the models behind them (its
// secrets and AI binding), and the isolate's circuit breaker.
import type { AdminLogger } from "../observability/admin-logger";
import { settings } from "../settings";
import { isolateBreaker } from "./circuit-breaker";
import { ChainRouter } from "./model-router";
import { defaultRouteSource } from "./model-routes";
import { routeChatModel } from "./route-models";
import { loadRouteTable, type RouteTable } from "./route-table";

/** The route table of this Worker, from the isolate's copy when it is fresh. */
export function envRouteTable(env: Cloudflare.Env): Promise<RouteTable> {
  const config = settings(env);
  return loadRouteTable(env.DB, defaultRouteSource(env, config), config.routing.cacheMs);
}

export function envRouter(env: Cloudflare.Env, logger: AdminLogger): ChainRouter {
  const config = settings(env);
  return new ChainRouter({
    routes: () => envRouteTable(env),
    modelFor: (route) => routeChatModel(route, env, config.llm.callTimeoutMs),
    breaker: isolateBreaker,
    breakerOptions: { failures: config.routing.breakerFailures, cooldownMs: config.routing.breakerCooldownMs },
    logger,
  });
}

// The router a Worker or session object uses for one org: the routes it may use (D1, cached per isolate), the
// models behind them (the deployment's secrets, the org's own secrets, the AI binding), and the isolate's circuit
// breaker.
import type { AdminLogger } from "../observability/admin-logger";
import { settings } from "../settings";
import { isolateBreaker } from "./circuit-breaker";
import { ChainRouter } from "./model-router";
import { defaultRoute, defaultRouteSource } from "./model-routes";
import type { RouteAttempt } from "./route-chain-walker";
import { routeChatModel } from "./route-models";
import { loadRouteTable, RouteTable } from "./route-table";

/**
 * The route table of `org` (null: the deployment's routes alone), from the isolate's copy when it is fresh. When
 * D1 cannot be read, calls go to `default` alone (logged): a model call never fails because its routes could not be
 * looked up.
 */
export async function envRouteTable(env: Cloudflare.Env, org: string | null, logger: AdminLogger): Promise<RouteTable> {
  const config = settings(env);
  const source = defaultRouteSource(env, config);
  try {
    return await loadRouteTable(env, org, source, { ttlMs: config.routing.cacheMs, logger });
  } catch (error) {
    logger.addException("[ModelRouter_RoutesUnread]", error);
    return new RouteTable([], defaultRoute(source), env);
  }
}

/** What hears a router's work: each upstream call it made, and each route table it read (the keys in play). */
export interface RouterHooks {
  onAttempt?: ((attempt: RouteAttempt) => void) | undefined;
  onTable?: ((table: RouteTable) => void) | undefined;
  /** The session's key in a provider's prompt cache (sent by the routes that say so). */
  promptCacheKey?: string | undefined;
}

export function envRouter(env: Cloudflare.Env, org: string, logger: AdminLogger, hooks: RouterHooks = {}): ChainRouter {
  const config = settings(env);
  const { onAttempt, onTable } = hooks;
  return new ChainRouter({
    ...(onAttempt ? { onAttempt } : {}),
    routes: async () => {
      const table = await envRouteTable(env, org, logger);
      onTable?.(table);
      return table;
    },
    modelFor: (route, table) =>
      routeChatModel(route, env, config.llm.callTimeoutMs, table, { promptCacheKey: hooks.promptCacheKey }),
    breaker: isolateBreaker,
    breakerOptions: { failures: config.routing.breakerFailures, cooldownMs: config.routing.breakerCooldownMs },
    logger,
  });
}

// The routes a model call of one org may take: the deployment's (stored ones and `default`) and the org's own, its
// own used instead of the deployment's of the same name; the keys they name (Worker secrets for the deployment's, the
// org's sealed secrets for its own, opened once); read from D1 at most once per MODEL_ROUTES_CACHE_MS per org in an
// isolate (a model call must not pay a D1 round trip, or a decryption, to learn where to go); and the chain a call
// walks: a route, then its fallbacks, each followed by its own.
import type { Db } from "../db";
import { IsolateCache } from "../isolate-cache";
import type { AdminLogger } from "../observability/admin-logger";
import { secretValue } from "../secret-name";
import { OrgSecrets, secretBoxOf } from "../tenancy/org-secrets";
import { routesSeenBy } from "./model-route-store";
import { DEFAULT_ROUTE, type DefaultRouteSource, defaultRoute, type ModelRoute } from "./model-routes";

/** Where a route's key comes from. */
export interface RouteKeys {
  /** The key a route sends ("" for a route that names none); null when the secret it names is not there. */
  keyOf(route: ModelRoute): string | null;
}

/** The keys of the deployment's routes alone: the Worker's secrets. */
export function workerKeys(env: object): RouteKeys {
  return { keyOf: (route) => (route.apiKeySecret ? secretValue(env, route.apiKeySecret) : "") };
}

export class RouteTable implements RouteKeys {
  private readonly byName: ReadonlyMap<string, ModelRoute>;

  /**
   * `routes` are the deployment's and one org's (an org's route wins over the deployment's of its name); `env` holds
   * the deployment's secrets, `orgSecrets` the org's secrets its routes name, opened.
   */
  constructor(
    routes: readonly ModelRoute[],
    readonly fallback: ModelRoute,
    private readonly env: object = {},
    private readonly orgSecrets: ReadonlyMap<string, string> = new Map(),
  ) {
    const byName = new Map<string, ModelRoute>();
    for (const route of routes) {
      const seen = byName.get(route.name);
      if (!seen || (seen.org === null && route.org !== null)) byName.set(route.name, route);
    }
    this.byName = byName;
  }

  /** A route the org may use by name, or `default`; null for any other name. */
  get(name: string): ModelRoute | null {
    if (name === DEFAULT_ROUTE) return this.fallback;
    return this.byName.get(name) ?? null;
  }

  /**
   * The routes a call on `name` tries, in order: the route, then each fallback followed depth-first by its own
   * fallbacks; a route appears once. A name no route has (a mode whose route was removed) is `default`.
   */
  chain(name: string): ModelRoute[] {
    const out: ModelRoute[] = [];
    const seen = new Set<string>();
    const visit = (routeName: string) => {
      const route = this.get(routeName);
      if (!route || seen.has(route.name)) return;
      seen.add(route.name);
      out.push(route);
      for (const next of route.fallbacks) visit(next);
    };
    visit(name);
    if (out.length === 0) out.push(this.fallback);
    return out;
  }

  /** The stored routes the org may use, by name. */
  stored(): ModelRoute[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The keys the routes of `chain` send (the secrets in play when they are called), without the empty ones. */
  keysOf(chain: readonly ModelRoute[]): string[] {
    return chain.flatMap((route) => {
      const key = this.keyOf(route);
      return key ? [key] : [];
    });
  }

  keyOf(route: ModelRoute): string | null {
    if (!route.apiKeySecret) return "";
    if (route.org === null) return secretValue(this.env, route.apiKeySecret);
    return this.orgSecrets.get(route.apiKeySecret) ?? null;
  }
}

/** What an isolate keeps of one org's routes: the rows, and the org's secrets they name, opened. */
interface KeptRoutes {
  routes: ModelRoute[];
  orgSecrets: Map<string, string>;
}

// Per org, kept per isolate for MODEL_ROUTES_CACHE_MS.
const copies = new IsolateCache<KeptRoutes>();

async function readRoutes(env: { DB: D1Database }, org: string | null, logger: AdminLogger): Promise<KeptRoutes> {
  const db: Db = env.DB;
  const routes = await routesSeenBy(db, org);
  const named = [...new Set(routes.flatMap((r) => (r.org !== null && r.apiKeySecret ? [r.apiKeySecret] : [])))];
  if (org === null || named.length === 0) return { routes, orgSecrets: new Map() };
  // A secret that does not open is as a secret not stored: its routes fail over, and the operator is told.
  const orgSecrets = await new OrgSecrets(db, org).values(await secretBoxOf(env), named, (name, error) =>
    logger.addException("[ModelRouter_SecretUnopened]", error, [["Secret", name]]),
  );
  return { routes, orgSecrets };
}

/**
 * The route table of `org` (null: the deployment's routes alone), from this isolate's copy when it is younger than
 * `ttlMs` (0: always read). An admin write in the isolate forgets the copies at once; other isolates see it within
 * `ttlMs`.
 */
export async function loadRouteTable(
  env: { DB: D1Database },
  org: string | null,
  source: DefaultRouteSource,
  options: { ttlMs: number; logger: AdminLogger; now?: number },
): Promise<RouteTable> {
  const kept = await copies.get(
    env.DB,
    `routes ${org ?? ""}`,
    options.ttlMs,
    () => readRoutes(env, org, options.logger),
    {
      now: options.now ?? Date.now(),
    },
  );
  return new RouteTable(kept.routes, defaultRoute(source), env, kept.orgSecrets);
}

/** Drops the isolate's copies (after an admin write to routes or secrets), so the next call reads D1. */
export function forgetRouteTable(db: D1Database): void {
  copies.forget(db);
}

// The routes a model call may take: the stored ones and `default`, read from D1 at most once per
// MODEL_ROUTES_CACHE_MS in an isolate (a model call must not pay a D1 round trip to learn where to go), and
// the chain a call walks: a route, then its fallbacks, each followed by its own.
import { IsolateCache } from "../isolate-cache";
import {
  DEFAULT_ROUTE,
  type DefaultRouteSource,
  defaultRoute,
  type ModelRoute,
  ModelRouteRegistry,
} from "./model-routes";

export class RouteTable {
  private readonly byName: ReadonlyMap<string, ModelRoute>;

  constructor(
    stored: readonly ModelRoute[],
    readonly fallback: ModelRoute,
  ) {
    this.byName = new Map(stored.map((r) => [r.name, r]));
  }

  /** A stored route by name, or `default`; null for any other name. */
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
}

// The table as D1 holds it, kept per isolate for MODEL_ROUTES_CACHE_MS.
const copies = new IsolateCache<ModelRoute[]>();

/**
 * The route table of `db`, from this isolate's copy when it is younger than `ttlMs` (0: always read). An
 * admin write in the isolate forgets the copy at once; other isolates see it within `ttlMs`.
 */
export async function loadRouteTable(
  db: D1Database,
  source: DefaultRouteSource,
  ttlMs: number,
  now: number = Date.now(),
): Promise<RouteTable> {
  const routes = await copies.get(db, "routes", ttlMs, () => new ModelRouteRegistry(db).list(), { now });
  return new RouteTable(routes, defaultRoute(source));
}

/** Drops the isolate's copy (after an admin write), so the next call reads D1. */
export function forgetRouteTable(db: D1Database): void {
  copies.forget(db);
}

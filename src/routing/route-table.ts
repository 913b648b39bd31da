// The routes a model call may take: the stored ones and `default`, read from D1 at most once per
// MODEL_ROUTES_CACHE_MS in an isolate (a model call must not pay a D1 round trip to learn where to go), and
// the chain a call walks: a route, then its fallbacks, each followed by its own.
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

interface Cached {
  routes: ModelRoute[];
  loadedAt: number;
}

// Per isolate and per database binding: what D1 said, and when. Plain data only: a promise made in one request
// (or Durable Object) cannot be awaited from another, so each reader that finds no fresh copy reads D1 itself.
const cache = new WeakMap<D1Database, Cached>();

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
  let hit = cache.get(db);
  if (!hit || now - hit.loadedAt >= ttlMs) {
    hit = { routes: await new ModelRouteRegistry(db).list(), loadedAt: now };
    cache.set(db, hit);
  }
  return new RouteTable(hit.routes, defaultRoute(source));
}

/** Drops the isolate's copy (after an admin write), so the next call reads D1. */
export function forgetRouteTable(db: D1Database): void {
  cache.delete(db);
}

// A per-isolate circuit breaker over model routes: a route that failed `failures` times in a row (before a first
// byte: unreachable, timed out, 429, 5xx) is skipped for `cooldownMs`; then it is tried again, and one success
// closes it. Every isolate keeps its own counts (no shared state on a model call's path); each opening and
// closing is logged.
import { keptPerIsolate } from "../isolate-cache";
import type { AdminLogger } from "../observability/admin-logger";

export interface BreakerOptions {
  failures: number;
  cooldownMs: number;
}

/** A route as the breaker counts it: by its org and name (two orgs' routes of one name are two routes). */
export interface BreakerRoute {
  name: string;
  org?: string | null;
}

const keyOf = (route: BreakerRoute) => (route.org ? `${route.org}\u0000${route.name}` : route.name);

interface RouteHealth {
  failuresInARow: number;
  /** Set while the circuit is open: the route is skipped until then. */
  openUntil: number | null;
}

export class CircuitBreaker {
  private readonly routes = new Map<string, RouteHealth>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether `route` is skipped now (its circuit is open and its cooldown has not passed). */
  isOpen(route: BreakerRoute): boolean {
    const openUntil = this.routes.get(keyOf(route))?.openUntil ?? null;
    return openUntil !== null && this.now() < openUntil;
  }

  /**
   * The routes of a chain to try now: those whose circuit is closed, in order; when every one is open, the first
   * (a call is never refused untried). `skipped` are the open ones left out.
   */
  candidates<R extends BreakerRoute>(chain: readonly R[]): { candidates: R[]; skipped: R[] } {
    const skipped = chain.filter((r) => this.isOpen(r));
    if (skipped.length === chain.length) return { candidates: chain.slice(0, 1), skipped: chain.slice(1) };
    return { candidates: chain.filter((r) => !this.isOpen(r)), skipped };
  }

  /** Forgets every route's counts: each circuit is closed. */
  reset(): void {
    this.routes.clear();
  }

  succeeded(route: BreakerRoute, logger: AdminLogger): void {
    const key = keyOf(route);
    const health = this.routes.get(key);
    if (!health) return;
    this.routes.delete(key);
    if (health.openUntil !== null) {
      logger.addCustomEvent("Message", "[ModelRouter_CircuitClosed]", `Model route '${route.name}' answered again.`, [
        ["Route", route.name],
      ]);
    }
  }

  failed(route: BreakerRoute, options: BreakerOptions, logger: AdminLogger): void {
    const key = keyOf(route);
    const health = this.routes.get(key) ?? { failuresInARow: 0, openUntil: null };
    this.routes.set(key, health);
    health.failuresInARow++;
    if (health.failuresInARow < options.failures) return;
    // Open (or, when it failed its trial after a cooldown, open again).
    health.openUntil = this.now() + options.cooldownMs;
    logger.addCustomEvent(
      "Warning",
      "[ModelRouter_CircuitOpen]",
      `Model route '${route.name}' failed ${health.failuresInARow} times in a row; it is skipped for ${options.cooldownMs} ms.`,
      [
        ["Route", route.name],
        ["Failures", String(health.failuresInARow)],
      ],
    );
  }
}

/** The isolate's breaker, shared by the passthrough and every session object the isolate runs. */
export const isolateBreaker = new CircuitBreaker();
keptPerIsolate(() => isolateBreaker.reset());

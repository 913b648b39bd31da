// What an isolate keeps of D1 for a while: per database binding and key, what D1 said and when. The model route
// table (MODEL_ROUTES_CACHE_MS) and the modes the agent's OpenAI door reads (MODES_CACHE_MS) are kept this way,
// so a model call or a message does not pay a D1 round trip to learn what an admin rarely changes. Plain data
// only: a promise made in one request (or Durable Object) cannot be awaited from another, so each reader that
// finds no fresh copy reads D1 itself. An admin write in the isolate forgets the copies at once; other isolates
// see it within the time.
//
// Everything an isolate keeps between requests (these copies, the known API keys, the circuit breaker's counts)
// is registered with keptPerIsolate, so forgetIsolateState can drop all of it: the test files, which share one
// isolate, each start from nothing kept, as a new isolate would.
const holders = new Set<() => void>();

/** Registers how to drop what one holder keeps in the isolate. */
export function keptPerIsolate(forget: () => void): void {
  holders.add(forget);
}

/** Drops everything the isolate keeps between requests (a new isolate starts so). */
export function forgetIsolateState(): void {
  for (const forget of holders) forget();
}

export class IsolateCache<V> {
  private byBinding = new WeakMap<D1Database, Map<string, { value: V; loadedAt: number }>>();

  constructor() {
    keptPerIsolate(() => {
      this.byBinding = new WeakMap();
    });
  }

  /**
   * The copy of `key` when it is younger than `ttlMs` (0: always read), else `load()`'s answer, kept when `keep`
   * says so (a value not kept is read again next time).
   */
  async get(
    binding: D1Database,
    key: string,
    ttlMs: number,
    load: () => Promise<V>,
    options: { keep?: (value: V) => boolean; now?: number } = {},
  ): Promise<V> {
    const now = options.now ?? Date.now();
    let byKey = this.byBinding.get(binding);
    const hit = byKey?.get(key);
    if (hit && now - hit.loadedAt < ttlMs) return hit.value;
    const value = await load();
    if (ttlMs > 0 && (options.keep?.(value) ?? true)) {
      if (!byKey) {
        byKey = new Map();
        this.byBinding.set(binding, byKey);
      }
      byKey.set(key, { value, loadedAt: now });
    } else {
      byKey?.delete(key);
    }
    return value;
  }

  /** Drops every copy read from `binding` (after an admin write), so the next reader reads D1. */
  forget(binding: D1Database): void {
    this.byBinding.delete(binding);
  }
}

/**
 * What an isolate trusts for a while: entries each forgotten at their own time (`until`), at most `maxEntries` of
 * them (the oldest go first), all dropped by forgetIsolateState. The known keys, browser sessions, grants and
 * tokens, and users' disabled state, are kept this way.
 */
export class ExpiringMap<K, V> {
  private entries = new Map<K, { value: V; until: number }>();

  constructor(private readonly maxEntries: number) {
    keptPerIsolate(() => this.entries.clear());
  }

  /** The value of `key` while it is fresh; an expired one is forgotten. */
  get(key: K, now = Date.now()): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: K, value: V, until: number): void {
    if (!this.entries.has(key) && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, until });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry `matches` (a key revoked here, a user disabled here: at once). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}

// One upstream request and its clock: one AbortController that a timeout, a client that went away or
// the end of the work aborts, and one timer at a time (first byte, then idle), always cleared at the end.

export type TimeoutKind = "first_byte" | "idle";

/** Why the upstream request was aborted when we gave up waiting. */
export class UpstreamTimeout extends Error {
  constructor(
    readonly kind: TimeoutKind,
    readonly ms: number,
  ) {
    super(
      kind === "first_byte"
        ? `The upstream LLM sent nothing within ${ms} ms.`
        : `The upstream LLM stream stalled: nothing arrived for ${ms} ms.`,
    );
    this.name = "UpstreamTimeout";
  }
}

/** The client stopped reading (disconnected or cancelled the body). */
export class ClientGone extends Error {
  constructor() {
    super("The client went away.");
    this.name = "ClientGone";
  }
}

export class UpstreamExchange {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Rejects with the abort reason; raced against every wait so that no wait outlives an abort. */
  private readonly aborted: Promise<never>;

  constructor() {
    this.aborted = new Promise<never>((_, reject) => {
      this.controller.signal.addEventListener("abort", () => reject(this.controller.signal.reason), { once: true });
    });
    // Only races observe it; an abort nobody waits for is not an unhandled rejection.
    this.aborted.catch(() => {});
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts (or restarts) the one timer; when it fires the upstream request is aborted. */
  arm(kind: TimeoutKind, ms: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.abort(new UpstreamTimeout(kind, ms)), ms);
  }

  disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** `work`, unless the exchange is aborted first (then the abort reason). */
  race<T>(work: Promise<T>): Promise<T> {
    return Promise.race([work, this.aborted]);
  }

  abort(reason: unknown): void {
    this.disarm();
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }
}

/** Resolves with `work`'s outcome if it settles within `ms`, else with "pending"; the timer is cleared. */
export async function settleWithin<T>(
  work: Promise<T>,
  ms: number,
): Promise<{ settled: true; value: T } | { settled: false }> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const later = new Promise<{ settled: false }>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), ms);
  });
  try {
    return await Promise.race([work.then((value) => ({ settled: true as const, value })), later]);
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

// One upstream request and its clock: one AbortController that a timeout, a client that went away or
// the end of the work aborts, and one deadline at a time (first byte, then idle) kept by one timer, cleared at the end.

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
  /** The one timer, when one runs, and when it fires (it may fire before the deadline it serves, never after). */
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = 0;
  /** The deadline being kept, if any: what fails when it passes. */
  private due: { kind: TimeoutKind; ms: number; at: number } | null = null;
  /** Rejects with the abort reason; raced against every wait so that no wait outlives an abort. */
  private readonly aborted: Promise<never>;

  /**
   * `wakeWithinMs`: the timer never waits longer than this (the shortest deadline the exchange will keep), so a
   * later, shorter deadline (idle after first byte) finds it early enough and need not remake it: one timer an
   * exchange, which restarts itself only for an exchange that outlasts it.
   */
  constructor(private readonly wakeWithinMs = Number.POSITIVE_INFINITY) {
    this.aborted = new Promise<never>((_, reject) => {
      this.controller.signal.addEventListener("abort", () => reject(this.controller.signal.reason), { once: true });
    });
    // Only races observe it; an abort nobody waits for is not an unhandled rejection.
    this.aborted.catch(() => {});
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Starts (or restarts) the deadline: `ms` from now the upstream request is aborted. A stream re-arms it after
   * every chunk, so the timer is not remade each time: one that fires before the deadline (its kind and clock
   * moved on since) starts itself again for what is left.
   */
  arm(kind: TimeoutKind, ms: number): void {
    const at = Date.now() + ms;
    this.due = { kind, ms, at };
    if (this.timer === null || this.timerAt > at) this.startTimer(ms, at);
  }

  /** The deadline stops counting (a stream's chunk is being sent on); the timer, if any, finds nothing due. */
  pause(): void {
    this.due = null;
  }

  /** The exchange's clock is done: the timer is cleared. */
  disarm(): void {
    this.due = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private startTimer(ms: number, at: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    const wait = Math.min(ms, this.wakeWithinMs);
    this.timerAt = at - ms + wait;
    this.timer = setTimeout(() => this.fire(), wait);
  }

  private fire(): void {
    this.timer = null;
    const due = this.due;
    if (due === null) return;
    const left = due.at - Date.now();
    if (left > 0) this.startTimer(left, due.at);
    else this.abort(new UpstreamTimeout(due.kind, due.ms));
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

// The upstream exchange's one timer: a deadline re-armed (a stream's next chunk) moves without a new timer each
// time, and still fails at the right moment with the right kind; a shorter deadline starts the timer again.
import { afterEach, describe, expect, it, vi } from "vitest";
import { UpstreamExchange, UpstreamTimeout } from "../../src/passthrough/exchange";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The abort's reason, or "none" if it did not come within `ms`. */
async function abortWithin(exchange: UpstreamExchange, ms: number): Promise<unknown> {
  return exchange.race(sleep(ms).then(() => "none")).catch((reason: unknown) => reason);
}

afterEach(() => vi.restoreAllMocks());

describe("the upstream exchange's clock", () => {
  it("keeps a deadline re-armed after a pause: the first timer's firing finds time left and waits for it", async () => {
    const exchange = new UpstreamExchange();
    exchange.arm("first_byte", 100);
    await sleep(60);
    exchange.pause();
    exchange.arm("idle", 400);
    // The first timer fires at 100 ms, 40 ms into the idle deadline (which ends at 460 ms): nothing is aborted.
    expect(await abortWithin(exchange, 100)).toBe("none");
    const reason = await abortWithin(exchange, 3_000);
    expect(reason).toBeInstanceOf(UpstreamTimeout);
    expect(reason instanceof UpstreamTimeout && [reason.kind, reason.ms]).toEqual(["idle", 400]);
  });

  it("starts the timer again for a deadline shorter than the running one", async () => {
    const exchange = new UpstreamExchange();
    exchange.arm("first_byte", 60_000);
    exchange.arm("idle", 20);
    const reason = await abortWithin(exchange, 2_000);
    expect(reason instanceof UpstreamTimeout && reason.kind).toBe("idle");
  });

  it("keeps one timer for a first-byte deadline and the shorter idle one after it, when it wakes within the shorter", () => {
    const timers = vi.spyOn(globalThis, "setTimeout");
    const exchange = new UpstreamExchange(60_000);
    exchange.arm("first_byte", 120_000);
    exchange.arm("idle", 60_000);
    exchange.disarm();
    expect(timers).toHaveBeenCalledTimes(1);
  });

  it("still fails a deadline longer than its wake-up at that deadline's time, not at the wake-up", async () => {
    const exchange = new UpstreamExchange(30);
    exchange.arm("first_byte", 150);
    expect(await abortWithin(exchange, 90)).toBe("none");
    const reason = await abortWithin(exchange, 3_000);
    expect(reason instanceof UpstreamTimeout && [reason.kind, reason.ms]).toEqual(["first_byte", 150]);
  });

  it.each([
    ["once disarmed", (exchange: UpstreamExchange) => exchange.disarm()],
    ["while paused", (exchange: UpstreamExchange) => exchange.pause()],
  ])("aborts nothing %s", async (_, stop) => {
    const exchange = new UpstreamExchange();
    exchange.arm("idle", 20);
    stop(exchange);
    expect(await abortWithin(exchange, 100)).toBe("none");
    expect(exchange.signal.aborted).toBe(false);
  });
});

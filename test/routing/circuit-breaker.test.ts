// The per-isolate circuit breaker: a route that fails N times in a row is skipped for the cooldown, then tried
// again; a success closes it. Opening and closing are logged. Driven with a clock of the test's own.
import { describe, expect, it } from "vitest";
import { type ChatModel, ModelError } from "../../src/llm/chat-model";
import { CircuitBreaker } from "../../src/routing/circuit-breaker";
import { ChainRouter } from "../../src/routing/model-router";
import { defaultRoute, type ModelRoute } from "../../src/routing/model-routes";
import { RouteTable } from "../../src/routing/route-table";
import { parseSettings } from "../../src/settings";
import { RecordingAdminLogger } from "../fixtures/recording-logger";

const options = { failures: 3, cooldownMs: 30_000 };

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function route(name: string, fallbacks: string[] = []): ModelRoute {
  return {
    ...defaultRoute({ llm: parseSettings({}).llm, workersAiModel: null }),
    name,
    provider: "openai_compatible",
    model: `${name}-model`,
    fallbacks,
    source: "stored",
  };
}

/** A deployment route named `fast`, as the breaker counts it. */
const FAST = { name: "fast" };

describe("the circuit breaker", () => {
  it("opens after three failures in a row and logs it", () => {
    const time = clock();
    const breaker = new CircuitBreaker(time.now);
    const logger = new RecordingAdminLogger();
    breaker.failed(FAST, options, logger);
    breaker.failed(FAST, options, logger);
    expect(breaker.isOpen(FAST)).toBe(false);
    breaker.failed(FAST, options, logger);
    expect(breaker.isOpen(FAST)).toBe(true);
    expect(logger.events.map((e) => [e.level, e.tag])).toEqual([["Warning", "[ModelRouter_CircuitOpen]"]]);
  });

  it("counts failures in a row only: a success in between starts the count again", () => {
    const breaker = new CircuitBreaker(clock().now);
    const logger = new RecordingAdminLogger();
    breaker.failed(FAST, options, logger);
    breaker.failed(FAST, options, logger);
    breaker.succeeded(FAST, logger);
    breaker.failed(FAST, options, logger);
    expect(breaker.isOpen(FAST)).toBe(false);
  });

  it("lets the route be tried again after the cooldown, and a success closes it with a log line", () => {
    const time = clock();
    const breaker = new CircuitBreaker(time.now);
    const logger = new RecordingAdminLogger();
    for (let i = 0; i < 3; i++) breaker.failed(FAST, options, logger);
    time.advance(30_000);
    expect(breaker.isOpen(FAST)).toBe(false);
    breaker.succeeded(FAST, logger);
    expect(logger.events.map((e) => e.tag)).toEqual(["[ModelRouter_CircuitOpen]", "[ModelRouter_CircuitClosed]"]);
  });

  it("opens again at once when the try after the cooldown fails", () => {
    const time = clock();
    const breaker = new CircuitBreaker(time.now);
    const logger = new RecordingAdminLogger();
    for (let i = 0; i < 3; i++) breaker.failed(FAST, options, logger);
    time.advance(30_000);
    breaker.failed(FAST, options, logger);
    expect(breaker.isOpen(FAST)).toBe(true);
  });
});

describe("the router and the breaker", () => {
  /** A model that fails with 503 while `down` says so, and answers with its route's name otherwise. */
  function models(down: Set<string>, calls: string[]) {
    return (r: ModelRoute): ChatModel => ({
      name: r.model,
      complete: async () => {
        calls.push(r.name);
        if (down.has(r.name)) throw new ModelError("model_unavailable", "HTTP 503", 503);
        return { content: `from ${r.name}`, toolCalls: [], finishReason: "stop" };
      },
    });
  }

  it("skips an open route, then tries it again after the cooldown and closes it when it answers", async () => {
    const time = clock();
    const breaker = new CircuitBreaker(time.now);
    const logger = new RecordingAdminLogger();
    const table = new RouteTable([route("fast", ["spare"]), route("spare")], route("default"));
    const down = new Set(["fast"]);
    const calls: string[] = [];
    const router = new ChainRouter({
      routes: async () => table,
      modelFor: models(down, calls),
      breaker,
      breakerOptions: options,
      logger,
    });
    const ask = async () =>
      (await router.complete("fast", { request: async () => ({ messages: [{ role: "user", content: "hi" }] }) }))
        .response.content;
    for (let i = 0; i < 3; i++) expect(await ask()).toBe("from spare");
    calls.length = 0;
    expect(await ask()).toBe("from spare");
    expect(calls).toEqual(["spare"]);
    time.advance(30_000);
    down.clear();
    expect(await ask()).toBe("from fast");
    expect(logger.events.filter((e) => e.tag.includes("Circuit")).map((e) => e.tag)).toEqual([
      "[ModelRouter_CircuitOpen]",
      "[ModelRouter_CircuitClosed]",
    ]);
  });

  it("still tries the first route when every route of the chain is open: a call is never refused untried", async () => {
    const breaker = new CircuitBreaker(clock().now);
    const logger = new RecordingAdminLogger();
    for (const name of ["fast", "spare"]) for (let i = 0; i < 3; i++) breaker.failed({ name }, options, logger);
    const calls: string[] = [];
    const router = new ChainRouter({
      routes: async () => new RouteTable([route("fast", ["spare"]), route("spare")], route("default")),
      modelFor: models(new Set(), calls),
      breaker,
      breakerOptions: options,
      logger,
    });
    const { response } = await router.complete("fast", {
      request: async () => ({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect([response.content, calls]).toEqual(["from fast", ["fast"]]);
  });

  for (const [code, status, opens] of [
    ["context_length_exceeded", 400, false],
    ["model_bad_request", 400, false],
    ["content_filtered", 400, false],
    ["model_not_found", 404, true],
    ["model_auth_failed", 401, true],
  ] as const) {
    it(`${opens ? "counts" : "leaves the circuit alone for"} a route's ${code}`, async () => {
      const breaker = new CircuitBreaker(clock().now);
      const router = new ChainRouter({
        routes: async () => new RouteTable([route("fast")], route("default")),
        modelFor: (r) => ({
          name: r.model,
          complete: () => Promise.reject(new ModelError(code, `HTTP ${status}`, status)),
        }),
        breaker,
        breakerOptions: options,
        logger: new RecordingAdminLogger(),
      });
      for (let i = 0; i < 3; i++) {
        const failed = await router
          .complete("fast", { request: async () => ({ messages: [{ role: "user", content: "hi" }] }) })
          .catch((e: unknown) => e);
        expect(failed instanceof ModelError ? failed.code : null).toBe(code);
      }
      expect(breaker.isOpen({ name: "fast" })).toBe(opens);
    });
  }
});

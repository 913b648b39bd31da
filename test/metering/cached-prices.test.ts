// A call's cost with the prompt cache: input read from and written to the cache priced at the route's cached rates
// (the input price when the route names none), the rest of the input and the output at theirs; the budget's amount
// counts every token.
import { describe, expect, it } from "vitest";
import { amountOf, costMicros } from "../../src/metering/meter";

const used = { promptTokens: 10_000, completionTokens: 100, cachedInputTokens: 8_000, cacheWriteInputTokens: 1_000 };

describe("cached input's prices", () => {
  it("prices reads, writes, fresh input and output each at the route's rate", () => {
    const prices = {
      inputPricePerMTok: 3,
      outputPricePerMTok: 15,
      cachedInputPricePerMTok: 0.3,
      cacheWritePricePerMTok: 3.75,
    };
    expect(costMicros(prices, used)).toBe(Math.round(1_000 * 3 + 8_000 * 0.3 + 1_000 * 3.75 + 100 * 15));
  });

  it("prices cached input at the input price when the route names no cached price", () => {
    expect(costMicros({ inputPricePerMTok: 3, outputPricePerMTok: 15 }, used)).toBe(10_000 * 3 + 100 * 15);
  });

  it("counts every input token in the budget's amount, cached or not", () => {
    expect(amountOf(used, { inputPricePerMTok: null, outputPricePerMTok: null })).toEqual({
      tokens: 10_100,
      costMicros: 0,
    });
  });
});

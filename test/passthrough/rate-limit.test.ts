// The per-key rate limit (Cloudflare's rate limiting binding; vitest.config.ts sets 5 a minute): past it,
// 429 in OpenAI's shape with Retry-After, counted by key id so other keys are not affected.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { type ErrorBody, newChatKey, openai, type TestKey, worker } from "./harness";

const LIMIT = 5;

const listModels = (key: TestKey) =>
  worker.fetch("http://localhost/v1/models", { headers: { authorization: `Bearer ${key.key}` } });

/** Calls until refused. The limiter's window is aligned to the clock, so one may roll over meanwhile. */
async function exhaust(key: TestKey): Promise<Response> {
  for (let i = 0; i < 2 * LIMIT + 2; i++) {
    const response = await listModels(key);
    if (response.status === 429) return response;
    await response.arrayBuffer();
  }
  throw new Error("the rate limiter never refused");
}

describe("passthrough rate limit", () => {
  it("answers 429 with Retry-After and rate_limit_exceeded once a key passes its limit", async () => {
    const response = await exhaust(await newChatKey());
    expect(response.headers.get("retry-after")).toBe("60");
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message: "Rate limit reached for this API key on requests per minute. Please try again in 60s.",
      type: "requests",
      code: "rate_limit_exceeded",
      param: null,
    });
  });

  it("lets the first requests of a key through before refusing", async () => {
    const key = await newChatKey();
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const response = await listModels(key);
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual(Array(LIMIT).fill(200));
  });

  it("counts each key apart: another key of the same org is still served", async () => {
    await exhaust(await newChatKey("org-a"));
    const models = await openai(await newChatKey("org-a")).models.list();
    expect(models.data).toHaveLength(1);
  });

  it("surfaces as the SDK's RateLimitError", async () => {
    const client = openai(await newChatKey());
    let error: unknown = null;
    for (let i = 0; i < 2 * LIMIT + 2 && error === null; i++) {
      error = await client.models.list().then(
        () => null,
        (e: unknown) => e,
      );
    }
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
  });
});

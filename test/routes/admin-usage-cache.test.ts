// The prompt cache in the admin's figures: /admin/usage sums the input read from and written to the provider's cache
// (JSON and CSV), /admin/usage/calls shows them per call, and a route's cache settings and cached prices are stored,
// shown and checked.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { call } from "../fixtures/sessions";
import { uniqueName } from "../mcp/fixtures";
import { newChatKey, type TestKey } from "../passthrough/harness";

const orgAdmin = () => newChatKey(`org-cache-${crypto.randomUUID()}`, ["chat", "admin"]);

async function get(key: TestKey, path: string, accept?: string) {
  const response = await exports.default.fetch(`http://aptix.test${path}`, {
    headers: { authorization: `Bearer ${key.key}`, ...(accept ? { accept } : {}) },
  });
  return { status: response.status, text: await response.text() };
}

async function seed(org: string): Promise<void> {
  const insert = env.DB.prepare(
    `INSERT INTO usage_records (id, org, key_id, user_id, endpoint, route, model, prompt_tokens, cached_input_tokens,
       cache_write_input_tokens, completion_tokens, total_tokens, latency_ms, outcome, cost_micros, created_at)
     VALUES (?, ?, 'k1', 'u', 'agent', 'claude', 'm', ?, ?, ?, 10, ?, 10, 'ok', 0, ?)`,
  );
  await env.DB.batch([
    insert.bind(crypto.randomUUID(), org, 3000, 0, 2900, 3010, "2026-11-20T10:00:00.000Z"),
    insert.bind(crypto.randomUUID(), org, 3100, 2900, 150, 3110, "2026-11-20T10:01:00.000Z"),
  ]);
}

describe("the prompt cache in /admin/usage", () => {
  it("sums the cache's reads and writes beside the prompt tokens, in JSON and CSV", async () => {
    const admin = await orgAdmin();
    await seed(admin.org);
    const json = JSON.parse((await get(admin, "/admin/usage?from=2026-11-20&to=2026-11-20&groupBy=route")).text);
    expect(json.rows).toEqual([
      expect.objectContaining({
        group: "claude",
        promptTokens: 6100,
        cachedInputTokens: 2900,
        cacheWriteInputTokens: 3050,
      }),
    ]);
    const csv = await get(admin, "/admin/usage?from=2026-11-20&to=2026-11-20&groupBy=route&format=csv");
    const [head, row] = csv.text.split("\r\n");
    const cells = Object.fromEntries((head ?? "").split(",").map((name, i) => [name, row?.split(",")[i]]));
    expect([cells.promptTokens, cells.cachedInputTokens, cells.cacheWriteInputTokens]).toEqual([
      "6100",
      "2900",
      "3050",
    ]);
  });

  it("shows each call's cached input in /admin/usage/calls", async () => {
    const admin = await orgAdmin();
    await seed(admin.org);
    const { calls } = JSON.parse((await get(admin, "/admin/usage/calls?limit=5")).text) as {
      calls: { cachedInputTokens: number; cacheWriteInputTokens: number }[];
    };
    expect(calls.map((c) => [c.cachedInputTokens, c.cacheWriteInputTokens])).toEqual([
      [2900, 150],
      [0, 2900],
    ]);
  });
});

describe("a route's prompt cache settings", () => {
  const operator = TEST_KEYS.operator.key;
  const anthropic = {
    provider: "anthropic",
    model: "claude-x",
    baseUrl: "https://api.anthropic.com",
    apiKeySecret: "TEST_ANTHROPIC_API_KEY",
  };
  const openai = { provider: "openai_compatible", model: "gpt-x", baseUrl: "https://api.openai.com/v1" };

  it("stores the cache settings and cached prices, with caching on and 5 minutes by default", async () => {
    const name = uniqueName("cache");
    const stored = await call("PUT", `/admin/model-routes/${name}`, anthropic, operator);
    expect((stored.json as { route: unknown }).route).toMatchObject({
      promptCaching: true,
      promptCacheTtl: "5m",
      promptCacheKey: false,
      cachedInputPricePerMTok: null,
      cacheWritePricePerMTok: null,
    });
    const changed = await call(
      "PUT",
      `/admin/model-routes/${name}`,
      { ...anthropic, promptCacheTtl: "1h", cachedInputPricePerMTok: 0.3, cacheWritePricePerMTok: 6 },
      operator,
    );
    expect((changed.json as { route: unknown }).route).toMatchObject({
      promptCacheTtl: "1h",
      cachedInputPricePerMTok: 0.3,
      cacheWritePricePerMTok: 6,
    });
    const key = await call(
      "PUT",
      `/admin/model-routes/${uniqueName("key")}`,
      { ...openai, promptCacheKey: true },
      operator,
    );
    expect((key.json as { route: unknown }).route).toMatchObject({ promptCacheKey: true, promptCacheTtl: null });
  });

  it("refuses promptCacheTtl off anthropic and promptCacheKey off openai_compatible, naming the field", async () => {
    const ttl = await call(
      "PUT",
      `/admin/model-routes/${uniqueName("bad")}`,
      { ...openai, promptCacheTtl: "1h" },
      operator,
    );
    const key = await call(
      "PUT",
      `/admin/model-routes/${uniqueName("bad")}`,
      { ...anthropic, promptCacheKey: true },
      operator,
    );
    const badTtl = await call(
      "PUT",
      `/admin/model-routes/${uniqueName("bad")}`,
      { ...anthropic, promptCacheTtl: "2h" },
      operator,
    );
    expect([ttl, key, badTtl].map((r) => [r.status, (r.json as { error: { param: string } }).error.param])).toEqual([
      [400, "promptCacheTtl"],
      [400, "promptCacheKey"],
      [400, "promptCacheTtl"],
    ]);
  });
});

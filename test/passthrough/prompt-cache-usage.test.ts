// The passthrough and the provider's prompt cache: the client's cache_control and prompt_cache_key relayed untouched,
// the provider's own usage fields relayed as they came, and the cache's reads and writes on the usage rows, priced at
// the route's cached rates. Anthropic's Messages API (JSON and stream), chat completions (JSON and stream) and the
// Responses API's usage.
import { env } from "cloudflare:workers";
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { SseUsageScanner, usageOfJson } from "../../src/passthrough/usage";
import { scriptAnthropic, scriptUpstream } from "../fixtures/upstream";
import { anthropic, toAnthropic } from "./anthropic-harness";
import { newChatKey, openai, type TestKey, workerWith } from "./harness";

interface CacheRow {
  prompt_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  cost_micros: number;
}

async function cacheRows(key: TestKey): Promise<CacheRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT prompt_tokens, cached_input_tokens, cache_write_input_tokens, cost_micros FROM usage_records
     WHERE key_id = ? ORDER BY rowid`,
  )
    .bind(key.keyId)
    .all<CacheRow>();
  return results;
}

const longText = (chars: number) => "Follow the house rules. ".repeat(Math.ceil(chars / 24)).slice(0, chars);

describe("the passthrough and prompt caching", () => {
  it("relays cache_control and meters Anthropic's cache reads and writes at the route's cached prices", async () => {
    const route = await toAnthropic({
      inputPricePerMTok: 3,
      outputPricePerMTok: 15,
      cachedInputPricePerMTok: 0.3,
      cacheWritePricePerMTok: 3.75,
    });
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }], {
      repeat: true,
    });
    const key = await newChatKey();
    const through = workerWith();
    const sent: string[] = [];
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: route,
      max_tokens: 64,
      system: [{ type: "text", text: `${longText(6_000)} ${script.marker}`, cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "Hi" }],
    };
    const first = await anthropic(key, { through, sent }).messages.create(params);
    const second = await anthropic(key, { through })
      .messages.stream({ ...params })
      .finalMessage();
    await through.settled();
    expect(JSON.parse((await script.requests())[0]?.body ?? "{}").system[0].cache_control).toEqual({
      type: "ephemeral",
    });
    const written = first.usage.cache_creation_input_tokens ?? 0;
    expect(written).toBeGreaterThan(1024);
    expect(second.usage.cache_read_input_tokens).toBe(written);
    const rows = await cacheRows(key);
    expect(rows.map((r) => [r.cached_input_tokens, r.cache_write_input_tokens])).toEqual([
      [0, written],
      [written, 0],
    ]);
    const fresh = first.usage.input_tokens;
    expect(rows[0]?.prompt_tokens).toBe(fresh + written);
    // Micro-dollars: fresh input at 3, cache writes at 3.75, reads at 0.3, output at 15 per million tokens.
    expect(rows[0]?.cost_micros).toBe(Math.round(fresh * 3 + written * 3.75 + first.usage.output_tokens * 15));
    expect(rows[1]?.cost_micros).toBe(Math.round(fresh * 3 + written * 0.3 + second.usage.output_tokens * 15));
  });

  it("relays prompt_cache_key and meters OpenAI's cached tokens, JSON and streamed", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }], env.TEST_UPSTREAM_URL, {
      repeat: true,
      measureUsage: true,
    });
    const key = await newChatKey();
    const through = workerWith();
    const messages = [
      { role: "system" as const, content: `${longText(6_000)} ${script.marker}` },
      { role: "user" as const, content: "Hi" },
    ];
    const client = openai(key, through);
    const first = await client.chat.completions.create({
      model: "gpt-cache",
      messages,
      prompt_cache_key: "session-1",
    });
    const stream = await client.chat.completions.create({
      model: "gpt-cache",
      messages: [...messages, { role: "assistant", content: "ok" }, { role: "user", content: "again" }],
      prompt_cache_key: "session-1",
      stream: true,
    });
    for await (const _ of stream) {
      // drained: the usage is read on the side of the relay
    }
    await through.settled();
    const bodies = await script.bodies();
    expect(bodies.map((b) => b.prompt_cache_key)).toEqual(["session-1", "session-1"]);
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    const rows = await cacheRows(key);
    expect(rows[0]?.cached_input_tokens).toBe(0);
    expect(rows[1]?.cached_input_tokens).toBeGreaterThanOrEqual(1024);
    expect(rows[1]?.cached_input_tokens).toBeLessThanOrEqual(rows[1]?.prompt_tokens ?? 0);
  });

  it("reads the Responses API's cached input tokens and a chat stream's final usage chunk", async () => {
    const responses = usageOfJson(
      new TextEncoder().encode(
        JSON.stringify({
          object: "response",
          usage: {
            input_tokens: 2000,
            input_tokens_details: { cached_tokens: 1536 },
            output_tokens: 5,
            total_tokens: 2005,
          },
        }),
      ),
    );
    expect(responses).toEqual({ promptTokens: 2000, completionTokens: 5, totalTokens: 2005, cachedInputTokens: 1536 });
    const scanner = new SseUsageScanner();
    const usage = {
      prompt_tokens: 1300,
      completion_tokens: 2,
      total_tokens: 1302,
      prompt_tokens_details: { cached_tokens: 1152 },
    };
    scanner.push(new TextEncoder().encode(`data: ${JSON.stringify({ choices: [], usage })}\n\n`));
    expect(scanner.usage).toEqual({
      promptTokens: 1300,
      completionTokens: 2,
      totalTokens: 1302,
      cachedInputTokens: 1152,
    });
  });
});

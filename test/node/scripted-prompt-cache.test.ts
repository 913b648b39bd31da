// The scripted upstreams' prompt caches report cached tokens as each provider does: Anthropic's at cache_control
// breakpoints (tools, system, messages, cumulative; a 20-block lookback; a minimum length), OpenAI's automatically
// for the longest shared prefix in 128-token steps from 1,024.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnthropicPromptCache, blocksOf, breakpointProblem } from "../upstream/anthropic-prompt-cache.ts";
import { OpenAIPromptCache, promptTextOf } from "../upstream/openai-prompt-cache.ts";
import { type ScriptedAnthropic, startScriptedAnthropic } from "../upstream/scripted-anthropic.ts";

const long = (word: string, chars: number) => word.repeat(Math.ceil(chars / word.length)).slice(0, chars);
const mark = { type: "ephemeral" };

describe("the scripted Anthropic prompt cache", () => {
  const system = [{ type: "text", text: long("You are helpful. ", 8_000), cache_control: mark }];
  const turn = (n: number) => [
    { role: "user", content: [{ type: "text", text: `question ${n}`, cache_control: mark }] },
  ];

  it("writes the prefix up to a breakpoint, then reads it and writes only what is new", () => {
    const cache = new AnthropicPromptCache({ minTokens: 1024 });
    const first = blocksOf({ system, messages: turn(1) });
    const one = cache.use("m", first, 0);
    expect(one.cache_read_input_tokens).toBe(0);
    expect(one.cache_creation_input_tokens).toBeGreaterThan(2_000);
    expect(one.input_tokens).toBe(0);

    const messages = [
      { role: "user", content: [{ type: "text", text: "question 1" }] },
      { role: "assistant", content: [{ type: "text", text: "answer 1" }] },
      ...turn(2),
    ];
    const two = cache.use("m", blocksOf({ system, messages }), 0);
    expect(two.cache_read_input_tokens).toBe(one.cache_creation_input_tokens);
    expect(two.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(two.cache_creation_input_tokens).toBeLessThan(20);
  });

  it("caches nothing below the minimum cacheable length", () => {
    const cache = new AnthropicPromptCache({ minTokens: 1024 });
    const blocks = blocksOf({ system: [{ type: "text", text: "short", cache_control: mark }], messages: turn(1) });
    cache.use("m", blocks, 50);
    const again = cache.use("m", blocks, 50);
    expect(again).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0, input_tokens: 50 });
  });

  it("keeps one model's cache apart from another's", () => {
    const cache = new AnthropicPromptCache({ minTokens: 1024 });
    const blocks = blocksOf({ system, messages: turn(1) });
    cache.use("m", blocks, 0);
    expect(cache.use("other", blocks, 0).cache_read_input_tokens).toBe(0);
  });

  it("refuses a fifth breakpoint in Anthropic's words", () => {
    const messages = [1, 2, 3, 4, 5].map((n) => turn(n)[0]);
    expect(breakpointProblem(blocksOf({ messages }))).toBe(
      "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    );
  });
});

describe("the scripted OpenAI prompt cache", () => {
  const system = { role: "system", content: long("You are helpful. ", 6_000) };

  it("reads the longest shared prefix in 128-token steps from 1,024", () => {
    const cache = new OpenAIPromptCache();
    const first = promptTextOf({ messages: [system, { role: "user", content: "one" }] });
    expect(cache.use("m", first)).toBe(0);
    const second = promptTextOf({
      messages: [system, { role: "user", content: "one" }, { role: "assistant", content: "two" }],
    });
    const cached = cache.use("m", second);
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect(cached % 128).toBe(0);
    expect(cached * 4).toBeLessThanOrEqual(first.length);
    expect((cached + 128) * 4).toBeGreaterThan(first.length);
  });

  it("reads nothing of a prompt under 1,024 tokens", () => {
    const cache = new OpenAIPromptCache();
    const text = promptTextOf({ messages: [{ role: "user", content: long("hi ", 3_000) }] });
    cache.use("m", text);
    expect(cache.use("m", text)).toBe(0);
  });
});

describe("the scripted Anthropic upstream through the official SDK", () => {
  let upstream: ScriptedAnthropic;
  let client: Anthropic;
  beforeAll(async () => {
    upstream = await startScriptedAnthropic({ apiKey: "sk-ant-cache" });
    client = new Anthropic({ apiKey: "sk-ant-cache", baseURL: upstream.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it("reports the cache's reads and writes in the usage, JSON and streamed alike", async () => {
    const script = upstream.createScript([{ type: "message", content: [{ type: "text", text: "ok" }] }], {
      repeat: true,
    });
    const params = {
      model: "claude-scripted-1",
      max_tokens: 64,
      system: [{ type: "text" as const, text: long("Rules. ", 6_000), cache_control: { type: "ephemeral" as const } }],
      messages: [{ role: "user" as const, content: `hi ${script.marker}` }],
    };
    const first = await client.messages.create(params);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1024);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    const second = await client.messages.stream(params).finalMessage();
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBe(first.usage.input_tokens);
  });
});

// Prompt caching on an Anthropic route: the adapter's cache_control breakpoints (tools, system, the previous turn's
// end, the request's last message; never more than four), and the cache's reads and writes counted in its usage,
// every input token in promptTokens. Against the scripted Anthropic upstream, which caches as Anthropic does.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { withCacheBreakpoints } from "../../src/llm/anthropic-cache-breakpoints";
import { AnthropicChatModel } from "../../src/llm/anthropic-chat-model";
import type { ChatMessage, ChatTool } from "../../src/wire/openai";
import { scriptAnthropic } from "../fixtures/upstream";

const model = (promptCache: ConstructorParameters<typeof AnthropicChatModel>[0]["promptCache"]) =>
  new AnthropicChatModel({
    baseUrl: env.TEST_ANTHROPIC_URL,
    apiKey: env.TEST_ANTHROPIC_API_KEY ?? "",
    model: "claude-cache-test",
    callTimeoutMs: 5_000,
    promptCache,
  });

const tools: ChatTool[] = ["read_file", "write_file"].map((name) => ({
  type: "function",
  function: { name, description: `${name} does it.`, parameters: { type: "object", properties: {} } },
}));

/** A session's second turn after one tool step: the system prompt is long enough to be cached. */
function conversation(marker: string): ChatMessage[] {
  return [
    { role: "system", content: `${"You are a careful assistant. ".repeat(200)}${marker}` },
    { role: "user", content: "first question" },
    { role: "assistant", content: "first answer" },
    { role: "user", content: "second question" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "call_1", content: "the file" },
  ];
}

type Block = { type: string; cache_control?: { type: string; ttl?: string } };
type Sent = {
  system: Block[];
  tools: Block[];
  messages: { role: string; content: string | Block[] }[];
};

/** The indexes of the blocks with a breakpoint (a string content has none). */
const marked = (blocks: string | readonly Block[]) =>
  typeof blocks === "string" ? [] : blocks.flatMap((b, i) => (b.cache_control ? [i] : []));

describe("AnthropicChatModel with prompt caching", () => {
  it("marks the last tool, the system prompt, the previous turn's end and the last message, four in all", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    await model({ ttl: "5m" }).complete({ messages: conversation(script.marker), tools });
    const sent = (await script.bodies())[0] as unknown as Sent;
    expect(marked(sent.tools)).toEqual([1]);
    expect(sent.system).toHaveLength(1);
    expect(sent.system[0]?.cache_control).toEqual({ type: "ephemeral" });
    const perMessage = sent.messages.map((m) => marked(m.content).length);
    // user, assistant (the previous turn's end), user (this turn), assistant tool_use, user tool_result (the last).
    expect(perMessage).toEqual([0, 1, 0, 0, 1]);
    expect(JSON.stringify(sent).match(/"cache_control"/g)).toHaveLength(4);
  });

  it("sends the extended lifetime when the route asks for it", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    await model({ ttl: "1h" }).complete({ messages: conversation(script.marker), tools });
    const sent = (await script.bodies())[0] as unknown as Sent;
    expect(sent.system[0]?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });

  it("sends no breakpoint when the route turns caching off", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    await model(null).complete({ messages: conversation(script.marker), tools });
    expect((await script.requests())[0]?.body).not.toContain("cache_control");
  });

  it("sends no breakpoint on a request that says promptCache false (a compaction's), on a route that caches", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }]);
    await model({ ttl: "5m" }).complete({ messages: conversation(script.marker), tools, promptCache: false });
    expect((await script.requests())[0]?.body).not.toContain("cache_control");
  });

  it("counts the cache's writes, then its reads, in a JSON answer and a stream, every input token in promptTokens", async () => {
    const script = await scriptAnthropic([{ type: "message", content: [{ type: "text", text: "ok" }] }], {
      repeat: true,
    });
    const messages = conversation(script.marker);
    const first = await model({ ttl: "5m" }).complete({ messages, tools });
    const written = first.usage?.cacheWriteInputTokens ?? 0;
    expect(written).toBeGreaterThan(1024);
    expect(first.usage?.cachedInputTokens).toBe(0);

    const next: ChatMessage[] = [
      ...messages,
      { role: "assistant", content: "read it" },
      { role: "user", content: "third question" },
    ];
    const second = await model({ ttl: "5m" }).complete({ messages: next, tools, onTextDelta: () => {} });
    expect(second.usage?.cachedInputTokens).toBe(written);
    const raw = (await script.requests()).length;
    expect(raw).toBe(2);
    const usage = second.usage;
    if (!usage) throw new Error("no usage");
    const fresh = usage.promptTokens - (usage.cachedInputTokens ?? 0) - (usage.cacheWriteInputTokens ?? 0);
    expect(fresh).toBeGreaterThanOrEqual(0);
    expect(usage.totalTokens).toBe(usage.promptTokens + usage.completionTokens);
  });

  it("leaves a request that already has breakpoints as it is, and skips an empty text block", () => {
    const own = {
      model: "m",
      max_tokens: 8,
      messages: [
        {
          role: "user" as const,
          content: [{ type: "text" as const, text: "hi", cache_control: { type: "ephemeral" } }],
        },
      ],
    };
    expect(withCacheBreakpoints(own)).toBe(own);
    const marked = withCacheBreakpoints({
      model: "m",
      max_tokens: 8,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "text", text: "" },
          ],
        },
      ],
    });
    expect(marked.messages[0]?.content).toEqual([
      { type: "text", text: "look", cache_control: { type: "ephemeral" } },
      { type: "text", text: "" },
    ]);
  });
});

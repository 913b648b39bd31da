// The Anthropic Messages adapter against the scripted Anthropic upstream: retries, our fixed error codes, the key
// kept out of every detail, streamed tool calls reassembled, and streams that fail or end early.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AnthropicChatModel } from "../../src/llm/anthropic-chat-model";
import { ModelError } from "../../src/llm/chat-model";
import { scriptAnthropic } from "../fixtures/upstream";
import { anthropicPromptTooLong } from "../upstream/script-types";

const model = (overrides: Partial<ConstructorParameters<typeof AnthropicChatModel>[0]> = {}) =>
  new AnthropicChatModel({
    baseUrl: env.TEST_ANTHROPIC_URL,
    apiKey: env.TEST_ANTHROPIC_API_KEY ?? "",
    model: "claude-test",
    callTimeoutMs: 5_000,
    retryBaseMs: 5,
    ...overrides,
  });
const ask = (marker: string) => [{ role: "user" as const, content: `hi ${marker}` }];

async function failureOf(promise: Promise<unknown>): Promise<ModelError> {
  const failure = await promise.catch((e: unknown) => e);
  if (!(failure instanceof ModelError)) throw new Error(`expected a ModelError, got ${String(failure)}`);
  return failure;
}

describe("AnthropicChatModel", () => {
  it("retries a 529 overloaded and a 429 with backoff, then returns the answer", async () => {
    const script = await scriptAnthropic([
      { type: "error", status: 529, error: { type: "overloaded_error", message: "Overloaded" } },
      { type: "error", status: 429, error: { type: "rate_limit_error", message: "slow down" }, retryAfter: 0 },
      { type: "message", content: [{ type: "text", text: "third time lucky" }] },
    ]);
    const response = await model().complete({ messages: ask(script.marker) });
    expect(response.content).toBe("third time lucky");
    expect(await script.requests()).toHaveLength(3);
  });

  it("answers a 400 'prompt is too long' with context_length_exceeded, not retried", async () => {
    const script = await scriptAnthropic([
      { type: "error", status: 400, error: anthropicPromptTooLong(210_000, 200_000) },
    ]);
    const failure = await failureOf(model().complete({ messages: ask(script.marker) }));
    expect([failure.code, failure.status]).toEqual(["context_length_exceeded", 400]);
    expect(failure.detail).toContain("prompt is too long");
    expect(await script.requests()).toHaveLength(1);
  });

  it("answers a wrong key (401 authentication_error) with model_auth_failed", async () => {
    const script = await scriptAnthropic([]);
    const failure = await failureOf(
      model({ apiKey: "sk-ant-wrong-key-1234" }).complete({ messages: ask(script.marker) }),
    );
    expect([failure.code, failure.status]).toEqual(["model_auth_failed", 401]);
  });

  it("keeps the key out of a 403's detail when the upstream quotes it back", async () => {
    const echoed = await scriptAnthropic([
      {
        type: "error",
        status: 403,
        error: { type: "permission_error", message: `key ${env.TEST_ANTHROPIC_API_KEY} may not` },
      },
    ]);
    const quoted = await failureOf(model().complete({ messages: ask(echoed.marker) }));
    expect(quoted.code).toBe("model_auth_failed");
    expect(quoted.detail).not.toContain(env.TEST_ANTHROPIC_API_KEY);
    expect(quoted.detail).toContain("[redacted]");
  });

  it("reads a JSON answer's tool_use blocks as tool calls with JSON-string arguments, and its usage", async () => {
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "toolu_a", name: "workspace_read_file", input: { path: "a.md" } },
        ],
        usage: { input_tokens: 10, output_tokens: 3 },
      },
    ]);
    const response = await model().complete({ messages: ask(script.marker) });
    expect(response).toEqual({
      content: "Reading.",
      toolCalls: [{ id: "toolu_a", name: "workspace_read_file", arguments: '{"path":"a.md"}' }],
      finishReason: "tool_calls",
      // Anthropic reports its cache's counts (0 here) beside input_tokens.
      usage: { promptTokens: 10, completionTokens: 3, totalTokens: 13, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
    });
  });

  it("reassembles a streamed answer's text and input_json_delta fragments, reporting text deltas and usage", async () => {
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [
          { type: "text", text: "Reading it now." },
          { type: "tool_use", id: "toolu_b", name: "workspace_read_file", input: { path: "notes/a.md" } },
        ],
        usage: { input_tokens: 12, output_tokens: 7 },
        chunkSize: 3,
      },
    ]);
    const deltas: string[] = [];
    const response = await model().complete({ messages: ask(script.marker), onTextDelta: (t) => deltas.push(t) });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe("Reading it now.");
    expect(response.toolCalls).toEqual([
      { id: "toolu_b", name: "workspace_read_file", arguments: '{"path":"notes/a.md"}' },
    ]);
    expect([response.finishReason, response.usage]).toEqual([
      "tool_calls",
      { promptTokens: 12, completionTokens: 7, totalTokens: 19, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
    ]);
  });

  it("fails a stream that sends an overloaded error event with model_unavailable", async () => {
    const script = await scriptAnthropic([
      {
        type: "message",
        content: [{ type: "text", text: "Partial answer" }],
        streamError: { type: "overloaded_error", message: "Overloaded", afterEvents: 3 },
      },
    ]);
    const failure = await failureOf(model().complete({ messages: ask(script.marker), onTextDelta: () => {} }));
    expect(failure.code).toBe("model_unavailable");
  });

  it("refuses a request the Messages API cannot carry before calling it", async () => {
    const script = await scriptAnthropic([]);
    const failure = await failureOf(
      model().complete({ messages: [{ role: "system", content: `only a system prompt ${script.marker}` }] }),
    );
    expect(failure.code).toBe("model_bad_request");
    expect(await script.requests()).toEqual([]);
  });
});

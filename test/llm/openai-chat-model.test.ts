// The OpenAI-compatible adapter against the scripted upstream: retries, clear errors, streaming, timeouts.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ModelError } from "../../src/llm/chat-model";
import { OpenAIChatModel } from "../../src/llm/openai-chat-model";
import { scriptUpstream } from "../fixtures/upstream";

const model = (overrides: Partial<ConstructorParameters<typeof OpenAIChatModel>[0]> = {}) =>
  new OpenAIChatModel({
    baseUrl: env.LLM_BASE_URL,
    apiKey: env.LLM_API_KEY ?? "",
    model: "m",
    callTimeoutMs: 5_000,
    retryBaseMs: 5,
    ...overrides,
  });
const ask = (marker: string) => [{ role: "user" as const, content: `hi ${marker}` }];

describe("OpenAIChatModel", () => {
  it("retries a 429 and a 500 with backoff, then returns the answer", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 429, body: { error: { message: "slow down" } }, headers: { "retry-after": "0" } },
      { type: "error", status: 500, body: { error: { message: "oops" } } },
      { type: "completion", content: "third time lucky" },
    ]);
    const response = await model().complete({ messages: ask(script.marker) });
    expect(response.content).toBe("third time lucky");
    expect(await script.requests()).toHaveLength(3);
  });

  it("surfaces a non-retryable upstream error as a ModelError with a fixed text, the upstream's words kept apart", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 401, body: { error: { message: "Incorrect API key provided." } } },
    ]);
    const failure = await model()
      .complete({ messages: ask(script.marker) })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ModelError);
    expect(failure).toMatchObject({
      code: "model_auth_failed",
      status: 401,
      message: "The model service refused this server's credentials; the operator must check its API key.",
    });
    expect((failure as ModelError).detail).toContain("Incorrect API key provided.");
  });

  it("reassembles a streamed answer and tool-call fragments, reporting text deltas", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        content: "Reading it now.",
        toolCalls: [{ id: "c1", name: "workspace_read_file", arguments: '{"path":"a.md"}' }],
        chunkSize: 3,
      },
    ]);
    const deltas: string[] = [];
    const response = await model().complete({ messages: ask(script.marker), onTextDelta: (t) => deltas.push(t) });
    expect(deltas.join("")).toBe("Reading it now.");
    expect(deltas.length).toBeGreaterThan(1);
    expect(response.toolCalls).toEqual([{ id: "c1", name: "workspace_read_file", arguments: '{"path":"a.md"}' }]);
    expect(response.usage).toEqual({ promptTokens: 11, completionTokens: 7, totalTokens: 18 });
  });

  it("gives up on a call that does not answer within its timeout", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const failure = await model({ callTimeoutMs: 200, maxRetries: 0 })
      .complete({ messages: ask(script.marker) })
      .catch((e: unknown) => e);
    expect((failure as ModelError).message).toBe("The model did not answer within 200 ms.");
  });
});

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

describe("OpenAIChatModel: a 200 is an answer only if it is one", () => {
  const html = "<html><body><h1>Welcome to nginx!</h1></body></html>";

  it("fails a streamed request answered 200 text/html with model_bad_response, not an empty answer", async () => {
    const script = await scriptUpstream([
      { type: "json", body: html, headers: { "content-type": "text/html; charset=utf-8" } },
    ]);
    const failure = await model()
      .complete({ messages: ask(script.marker), onTextDelta: () => {} })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({
      code: "model_bad_response",
      message: "The model service sent an answer that is not a chat completion.",
    });
  });

  it("fails a plain request answered 200 text/html with model_bad_response", async () => {
    const script = await scriptUpstream([
      { type: "json", body: html, headers: { "content-type": "text/html; charset=utf-8" } },
    ]);
    const failure = await model()
      .complete({ messages: ask(script.marker) })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "model_bad_response" });
  });

  it("fails a 200 JSON body that is not a chat completion with model_bad_response", async () => {
    const script = await scriptUpstream([{ type: "json", body: { object: "list", data: [] } }]);
    const failure = await model()
      .complete({ messages: ask(script.marker) })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "model_bad_response" });
  });

  it("fails an event stream that ends before the answer finishes with model_bad_response", async () => {
    const chunk = { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "Half" } }] };
    const script = await scriptUpstream([{ type: "sse", events: [`data: ${JSON.stringify(chunk)}`], end: "close" }]);
    const failure = await model()
      .complete({ messages: ask(script.marker), onTextDelta: () => {} })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "model_bad_response" });
    expect((failure as ModelError).detail).toBe("the event stream ended before the answer finished");
  });

  it("fails an event stream of JSON that is not chat completion chunks with model_bad_response", async () => {
    const script = await scriptUpstream([
      { type: "sse", events: ['data: {"hello":"world"}', "data: [DONE]"], end: "close" },
    ]);
    const failure = await model()
      .complete({ messages: ask(script.marker), onTextDelta: () => {} })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "model_bad_response" });
  });

  it("reads a JSON completion sent in answer to a streamed request, reporting its text once", async () => {
    const script = await scriptUpstream([
      {
        type: "json",
        body: {
          choices: [{ index: 0, message: { role: "assistant", content: "Whole answer." }, finish_reason: "stop" }],
        },
      },
    ]);
    const deltas: string[] = [];
    const response = await model().complete({ messages: ask(script.marker), onTextDelta: (t) => deltas.push(t) });
    expect([response.content, deltas]).toEqual(["Whole answer.", ["Whole answer."]]);
  });

  it("never quotes our own key in an error's detail, even when the upstream echoes it", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 401, body: { error: { message: `Incorrect API key provided: ${env.LLM_API_KEY}` } } },
    ]);
    const failure = (await model()
      .complete({ messages: ask(script.marker) })
      .catch((e: unknown) => e)) as ModelError;
    expect(failure.detail).toContain("Incorrect API key provided: [redacted]");
    expect(`${failure.message} ${failure.detail}`).not.toContain(env.LLM_API_KEY ?? "no key");
  });

  it("removes its abort listener after each backoff", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 503, body: { error: { message: "busy" } } },
      { type: "error", status: 503, body: { error: { message: "busy" } } },
      { type: "completion", content: "ok" },
    ]);
    const controller = new AbortController();
    const added: string[] = [];
    const removed: string[] = [];
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
      added.push(args[0]);
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<AbortSignal["removeEventListener"]>) => {
      removed.push(args[0]);
      remove(...args);
    };
    await model().complete({ messages: ask(script.marker), signal });
    expect(removed.length).toBe(added.length);
  });
});

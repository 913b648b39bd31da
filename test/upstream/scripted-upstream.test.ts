// The scripted upstream itself: answers by script, streams like OpenAI, records what it was sent.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { openAIModelNotFound, openAIUnsupportedMaxTokens } from "./script-types";

const post = (body: unknown) =>
  fetch(`${env.LLM_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.LLM_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("scripted upstream", () => {
  it("answers the script named by the marker and records the request", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hi there." }]);
    const response = await post({ model: "m", messages: [{ role: "user", content: `hello ${script.marker}` }] });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe("Hi there.");
    expect((await script.bodies())[0]?.model).toBe("m");
  });

  it("answers a model it was not given as OpenAI does: 404 model_not_found, no step used", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "unused" }], env.TEST_UPSTREAM_URL, {
      models: ["gpt-4o-mini"],
    });
    const response = await post({ model: "demo", messages: [{ role: "user", content: script.marker }] });
    expect([response.status, await response.json()]).toEqual([404, openAIModelNotFound("demo")]);
    const known = await post({ model: "gpt-4o-mini", messages: [{ role: "user", content: script.marker }] });
    expect(known.status).toBe(200);
  });

  it("answers messages longer than its context as OpenAI does: 400 context_length_exceeded", async () => {
    const script = await scriptUpstream([], env.TEST_UPSTREAM_URL, { contextTokens: 10 });
    const messages = [{ role: "user", content: `${"long ".repeat(20)}${script.marker}` }];
    const response = await post({ model: "m", messages });
    const body = (await response.json()) as { error: { code: string; param: string; message: string } };
    expect([response.status, body.error.code, body.error.param]).toEqual([400, "context_length_exceeded", "messages"]);
    expect(body.error.message).toMatch(
      /^This model's maximum context length is 10 tokens\. However, your messages resulted in \d+ tokens\./,
    );
  });

  it("counts the context at the script's charsPerToken, as the model's tokenizer would", async () => {
    const script = await scriptUpstream([], env.TEST_UPSTREAM_URL, { contextTokens: 30, charsPerToken: 2 });
    const messages = [{ role: "user", content: script.marker }];
    const tokens = Math.ceil(JSON.stringify({ messages }).length / 2);
    const body = (await (await post({ model: "m", messages })).json()) as { error: { message: string } };
    expect(body.error.message).toBe(
      `This model's maximum context length is 30 tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
    );
  });

  it("refuses messages and max_completion_tokens together beyond its context, in OpenAI's words", async () => {
    const first = await scriptUpstream([], env.TEST_UPSTREAM_URL);
    const messages = [{ role: "user", content: first.marker }];
    const tokens = Math.ceil(JSON.stringify({ messages }).length / 4);
    const script = await scriptUpstream([], env.TEST_UPSTREAM_URL, { contextTokens: tokens + 50 });
    const sent = [{ role: "user", content: script.marker }];
    const response = await post({ model: "m", messages: sent, max_completion_tokens: 100 });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error.code, body.error.message]).toEqual([
      400,
      "context_length_exceeded",
      `This model's maximum context length is ${tokens + 50} tokens. However, you requested ${tokens + 100} tokens (${tokens} in the messages, 100 in the completion). Please reduce the length of the messages or completion.`,
    ]);
  });

  it("refuses max_tokens as OpenAI's reasoning models do, and answers max_completion_tokens", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }], env.TEST_UPSTREAM_URL, {
      refuseMaxTokens: true,
    });
    const messages = [{ role: "user", content: script.marker }];
    const refused = await post({ model: "o4-mini", messages, max_tokens: 16 });
    expect([refused.status, await refused.json()]).toEqual([400, openAIUnsupportedMaxTokens()]);
    const answered = await post({ model: "o4-mini", messages, max_completion_tokens: 16 });
    expect(answered.status).toBe(200);
  });

  it("streams content and tool-call argument fragments, then [DONE]", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        content: "Reading.",
        toolCalls: [{ name: "f", arguments: '{"path":"a.txt"}' }],
        chunkSize: 4,
      },
    ]);
    const response = await post({ model: "m", stream: true, messages: [{ role: "user", content: script.marker }] });
    const text = await response.text();
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const args = events
      .slice(0, -1)
      .map(
        (e) =>
          JSON.parse(e.slice(6)) as { choices: { delta: { tool_calls?: { function: { arguments?: string } }[] } }[] },
      )
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((t) => t.function.arguments ?? "")
      .join("");
    expect(args).toBe('{"path":"a.txt"}');
  });

  it("refuses a request without its API key, like an OpenAI server", async () => {
    const response = await fetch(`${env.LLM_BASE_URL}/models`);
    expect(response.status).toBe(401);
  });

  it("answers an unscripted request on a model it does not list 404 model_not_found, as OpenAI words it", async () => {
    const response = await post({ model: "demo", max_tokens: 1, messages: [{ role: "user", content: "ping" }] });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error]).toEqual([
      404,
      expect.objectContaining({
        code: "model_not_found",
        message: "The model `demo` does not exist or you do not have access to it.",
      }),
    ]);
  });

  it("answers an unscripted request on a listed model briefly, and refuses tools on the model without them", async () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }];
    const ping = (model: string) =>
      post({ model, max_tokens: 1, tools, messages: [{ role: "user", content: "ping" }] });
    const answered = (await (await ping("scripted-model")).json()) as { choices: { message: { content: string } }[] };
    expect(answered.choices[0]?.message.content).toBe("ok");
    const refused = await ping("scripted-model-no-tools");
    expect([refused.status, ((await refused.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      "registry.ollama.ai/library/scripted-model-no-tools:latest does not support tools",
    ]);
  });
});

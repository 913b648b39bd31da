// POST /v1/chat/completions, not streamed: the client's own request reaches the upstream unchanged
// (bytes, system prompt, tools, unknown fields) with our upstream key, and the answer comes back as sent.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scriptUpstream } from "../fixtures/upstream";
import { newChatKey, openai, post } from "./harness";

describe("POST /v1/chat/completions", () => {
  it("answers a plain completion with the upstream's message and usage", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "Paris.", usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 } },
    ]);
    const completion = await openai(await newChatKey()).chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: `Capital of France? ${script.marker}` }],
    });
    expect(completion.choices[0]?.message.content).toBe("Paris.");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toEqual({ prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 });
    expect(completion.model).toBe("gpt-test");
  });

  it("sends the upstream exactly the client's body bytes, system prompt, tools and unknown fields included", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    // Odd spacing, key order, escapes and fields we know nothing about: all must arrive as written.
    const body = `{ "messages" : [ {"role":"system","content":"You are Cline. Use tools.\\u00e9 ✓"},
      {"role":"user","content":"hi ${script.marker}"} ],
      "model":"gpt-test", "tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}],
      "tool_choice":"auto", "response_format":{"type":"text"}, "x_vendor_extension": {"keep": [1, 2.50, null]} }`;
    const response = await post("/chat/completions", await newChatKey(), body);
    expect(response.status).toBe(200);
    const [received] = await script.requests();
    expect(received?.body).toBe(body);
    expect(received?.path).toBe("/v1/chat/completions");
  });

  it("authenticates upstream with the server's LLM_API_KEY, never the client's key", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const key = await newChatKey();
    await openai(key).chat.completions.create({
      model: "gpt-test",
      messages: [{ role: "user", content: script.marker }],
    });
    const [received] = await script.requests();
    expect(received?.headers.authorization).toBe(`Bearer ${env.LLM_API_KEY}`);
    expect(JSON.stringify(received?.headers)).not.toContain(key.key);
  });

  it("passes content-type, accept, openai-*, anthropic-* and x-request-id upstream and drops the rest", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
    const response = await post(
      "/chat/completions",
      await newChatKey(),
      { model: "gpt-test", messages: [{ role: "user", content: script.marker }] },
      {
        accept: "application/json",
        "openai-beta": "assistants=v2",
        "openai-organization": "org-123",
        "anthropic-version": "2023-06-01",
        "x-request-id": "req-from-client-1",
        cookie: "session=secret",
        "x-stainless-os": "Linux",
        "x-forwarded-for": "10.0.0.1",
        "user-agent": "cline/3.0",
      },
    );
    expect(response.status).toBe(200);
    const headers = (await script.requests())[0]?.headers ?? {};
    expect(headers).toMatchObject({
      "content-type": "application/json",
      accept: "application/json",
      "openai-beta": "assistants=v2",
      "anthropic-version": "2023-06-01",
      "x-request-id": "req-from-client-1",
    });
    // The client does not choose which organization our LLM_API_KEY bills.
    for (const dropped of ["openai-organization", "cookie", "x-stainless-os", "x-forwarded-for", "user-agent"]) {
      expect(headers).not.toHaveProperty(dropped);
    }
  });

  it("answers with our X-Request-Id and without the upstream's account headers", async () => {
    const script = await scriptUpstream([
      {
        type: "json",
        body: { id: "chatcmpl-1", object: "chat.completion", created: 0, model: "gpt-test", choices: [] },
        headers: { "openai-organization": "our-org", "openai-project": "proj_ours", "openai-processing-ms": "7" },
      },
    ]);
    const response = await post("/chat/completions", await newChatKey(), {
      model: "gpt-test",
      messages: [{ role: "user", content: script.marker }],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/\S+/);
    expect(response.headers.get("openai-processing-ms")).toBe("7");
    expect(response.headers.has("openai-organization")).toBe(false);
    expect(response.headers.has("openai-project")).toBe(false);
  });

  it("returns the upstream's JSON answer byte for byte", async () => {
    // Spacing and key order no serializer would produce: a re-serialised answer would differ.
    const answer =
      '{ "object" : "chat.completion",  "id":"cmpl-odd", "choices": [ ], "usage": null, "extra": {"kept" : true} }';
    const script = await scriptUpstream([
      { type: "json", body: answer, headers: { "content-type": "application/json" } },
    ]);
    const response = await post("/chat/completions", await newChatKey(), {
      model: "gpt-test",
      messages: [{ role: "user", content: script.marker }],
    });
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.text()).toBe(answer);
  });
});

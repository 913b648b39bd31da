// The agent's OpenAI door driven by the official `openai` client: models, a plain and a streamed answer, a
// client tool round trip, a history resent without the session header, approvals answered in words.
import { env, exports } from "cloudflare:workers";
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { agentClient } from "../fixtures/agent-client";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";

const weather: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe("/agent/v1 with the openai client", () => {
  it("lists one model per mode", async () => {
    const models = await agentClient().models.list();
    expect(models.data.map((m) => m.id)).toEqual(
      expect.arrayContaining(["aptix-agent/general", "aptix-agent/workspace"]),
    );
  });

  it("retrieves one model by its id", async () => {
    const model = await agentClient().models.retrieve("aptix-agent/workspace");
    expect(model).toMatchObject({ id: "aptix-agent/workspace", object: "model", owned_by: "aptix" });
  });

  it("answers a message as a chat completion, and names its session", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello from the agent." }]);
    const { data, response } = await agentClient()
      .chat.completions.create({
        model: "aptix-agent/general",
        messages: [{ role: "user", content: `hi ${script.marker}` }],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("Hello from the agent.");
    expect(data.choices[0]?.finish_reason).toBe("stop");
    expect(data.object).toBe("chat.completion");
    expect(response.headers.get("x-aptix-session")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("starts a new conversation's session owned by the key's org, in the model's mode, in its org's index", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "A new conversation." }]);
    const { response } = await agentClient()
      .chat.completions.create({
        model: "aptix-agent/workspace",
        messages: [{ role: "user", content: `hi ${script.marker}` }],
      })
      .withResponse();
    const sessionId = response.headers.get("x-aptix-session") ?? "";
    const view = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${TEST_KEYS.chat.key}` },
    });
    expect(((await view.json()) as { mode: string }).mode).toBe("workspace");
    const indexed = await env.DB.prepare("SELECT org, mode FROM session_index WHERE session_id = ?")
      .bind(sessionId)
      .first();
    expect(indexed).toEqual({ org: TEST_KEYS.chat.org, mode: "workspace" });
    const other = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${TEST_KEYS.otherOrg.key}` },
    });
    expect(other.status).toBe(404);
  });
});

describe("/agent/v1 conversations with the openai client", () => {
  it("streams the answer as chunks, with usage when asked, ending the stream", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Streaming from the agent.", chunkSize: 5 }]);
    const stream = await agentClient().chat.completions.create({
      model: "aptix-agent/general",
      messages: [{ role: "user", content: `stream ${script.marker}` }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let pieces = 0;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) {
        text += choice.delta.content;
        pieces++;
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("Streaming from the agent.");
    expect(pieces).toBeGreaterThan(1);
    expect(finish).toBe("stop");
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it("hands a call of the client's own tool to the client, and resumes with its result", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { type: "completion", content: "It is sunny in Paris." },
    ]);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: `weather in Paris? ${script.marker}` },
    ];
    const first = await agentClient().chat.completions.create({
      model: "aptix-agent/general",
      messages,
      tools: [weather],
    });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type === "function" ? call.function : null).toEqual({
      name: "get_weather",
      arguments: '{"city":"Paris"}',
    });
    if (!choice || !call) throw new Error("no tool call");
    messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "sunny, 24 °C" });
    const second = await agentClient().chat.completions.create({
      model: "aptix-agent/general",
      messages,
      tools: [weather],
    });
    expect(second.choices[0]?.message.content).toBe("It is sunny in Paris.");
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toBe('"sunny, 24 °C"');
  });

  it("continues one session when the client resends the whole history without the header", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "First answer." },
      { type: "completion", content: "Second answer." },
    ]);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: `one ${script.marker}` },
    ];
    const first = await agentClient()
      .chat.completions.create({ model: "aptix-agent/general", messages })
      .withResponse();
    messages.push(first.data.choices[0]?.message ?? { role: "assistant", content: "" }, {
      role: "user",
      content: "two",
    });
    const second = await agentClient()
      .chat.completions.create({ model: "aptix-agent/general", messages })
      .withResponse();
    expect(second.data.choices[0]?.message.content).toBe("Second answer.");
    expect(second.response.headers.get("x-aptix-session")).toBe(first.response.headers.get("x-aptix-session"));
  });

  it("starts a new session seeded with the history when the history contradicts the session's transcript", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "First answer." },
      { type: "completion", content: "An answer to the edited history." },
    ]);
    const first = await agentClient()
      .chat.completions.create({
        model: "aptix-agent/general",
        messages: [{ role: "user", content: `one ${script.marker}` }],
      })
      .withResponse();
    const edited: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: `one ${script.marker}` },
      { role: "assistant", content: "An answer we never gave." },
      { role: "user", content: "two" },
    ];
    const second = await agentClient()
      .chat.completions.create({ model: "aptix-agent/general", messages: edited })
      .withResponse();
    const firstSession = first.response.headers.get("x-aptix-session");
    const secondSession = second.response.headers.get("x-aptix-session");
    expect(secondSession).not.toBe(firstSession);
    const sent = (await script.messagesOf(1)).map((m) => [m.role, m.content]);
    expect(sent.slice(1)).toEqual([
      ["user", `one ${script.marker}`],
      ["assistant", "An answer we never gave."],
      ["user", "two"],
    ]);
  });

  it("answers 404 naming the known models for a model that is not a mode", async () => {
    await expect(
      agentClient().chat.completions.create({ model: "aptix-agent/nope", messages: [{ role: "user", content: "hi" }] }),
    ).rejects.toMatchObject({ status: 404, code: "model_not_found" });
  });

  it("answers 400 naming the message whose content is neither text nor text parts", async () => {
    const refused = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEYS.chat.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "aptix-agent/general", messages: [{ role: "user", content: 5 }] }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: {
        message: "Invalid 'messages.0.content' in the request body: must be a string, an array of text parts, or null.",
        type: "invalid_request_error",
        code: "invalid_request",
        param: "messages.0.content",
      },
    });
  });

  it("answers 400 naming a content part that is not text", async () => {
    await expect(
      agentClient().chat.completions.create({
        model: "aptix-agent/general",
        messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      error: {
        param: "messages.0.content.0",
        message:
          "Invalid 'messages.0.content.0' in the request body: only text parts are supported (the agent reads text).",
      },
    });
  });
});

describe("/agent/v1 approvals in words", () => {
  const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };

  async function pausedConversation() {
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [hello] },
      { type: "completion", content: "Done with the greeting." },
    ]);
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: `greet Dana ${script.marker}` },
    ];
    const asked = await agentClient().chat.completions.create({ model: `aptix-agent/${mode}`, messages });
    messages.push(asked.choices[0]?.message ?? { role: "assistant", content: "" });
    return { mode, script, messages, asked };
  }

  it("asks in words, naming each call that waits and how to answer", async () => {
    const { asked } = await pausedConversation();
    expect(asked.choices[0]?.finish_reason).toBe("stop");
    expect(asked.choices[0]?.message.content).toBe(
      'I need your approval for this tool call:\n1. agent_hello_world with {"name":"Dana"}\n\nReply "yes" to approve, or "no" to deny (anything after "no" is passed on as your reason). Any other reply denies and is taken as your next instruction.',
    );
  });

  it("runs the calls when the user says yes", async () => {
    const { mode, script, messages } = await pausedConversation();
    messages.push({ role: "user", content: "yes" });
    const done = await agentClient().chat.completions.create({ model: `aptix-agent/${mode}`, messages });
    expect(done.choices[0]?.message.content).toBe("Done with the greeting.");
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("Hello, Dana");
  });

  it("denies the calls with the user's words as the reason when the user says no", async () => {
    const { mode, script, messages } = await pausedConversation();
    messages.push({ role: "user", content: "no, not now" });
    await agentClient().chat.completions.create({ model: `aptix-agent/${mode}`, messages });
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(JSON.parse(toolMessage?.content ?? "{}")).toEqual({ error: "Tool call denied by the user: no, not now" });
  });

  it("refuses streamed tool results the session does not wait for with 409, before a stream opens", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Nothing to run." }]);
    const { response } = await agentClient()
      .chat.completions.create({ model: "aptix-agent/general", messages: [{ role: "user", content: script.marker }] })
      .withResponse();
    const sessionId = response.headers.get("x-aptix-session") ?? "";
    const streamed = await exports.default.fetch("http://aptix.test/agent/v1/chat/completions", {
      method: "POST",
      headers: {
        authorization: `Bearer ${TEST_KEYS.chat.key}`,
        "content-type": "application/json",
        "x-aptix-session": sessionId,
      },
      body: JSON.stringify({
        model: "aptix-agent/general",
        stream: true,
        messages: [{ role: "tool", tool_call_id: "call_none", content: "late" }],
      }),
    });
    expect(streamed.status).toBe(409);
    expect(streamed.headers.get("content-type")).toContain("application/json");
    expect(((await streamed.json()) as { error: { type: string } }).error.type).toBe("conflict_error");
  });

  it("takes a request over 1 MiB, as tool results with whole files make them", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Read it." }]);
    const big = `${"x".repeat(1_500_000)} ${script.marker}`;
    const answer = await agentClient().chat.completions.create({
      model: "aptix-agent/general",
      messages: [{ role: "user", content: big }],
    });
    expect(answer.choices[0]?.message.content).toBe("Read it.");
    // 1.5 MB through the whole turn takes over 3 s alone on these machines (see messages-door.test.ts's twin): its own
    // limit, not the default 5 s.
  }, 20_000);

  it("reports the input the model read from its prompt cache as OpenAI's prompt_tokens_details", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        content: "Cached.",
        usage: {
          prompt_tokens: 2048,
          completion_tokens: 3,
          total_tokens: 2051,
          prompt_tokens_details: { cached_tokens: 1920 },
        },
      },
    ]);
    const answer = await agentClient().chat.completions.create({
      model: "aptix-agent/general",
      messages: [{ role: "user", content: `Hello again. ${script.marker}` }],
    });
    expect([answer.usage?.prompt_tokens, answer.usage?.prompt_tokens_details?.cached_tokens]).toEqual([2048, 1920]);
  });

  it("reports each request's own tokens when the client's results resume a turn, plain and streamed", async () => {
    const calls = (content: string) => ({
      type: "completion" as const,
      toolCalls: [{ name: "get_weather", arguments: '{"city":"Paris"}' }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
      content,
    });
    const answers = {
      type: "completion" as const,
      content: "Sunny.",
      usage: { prompt_tokens: 200, completion_tokens: 5, total_tokens: 205 },
    };
    const script = await scriptUpstream([calls(""), answers, calls(""), answers]);
    for (const stream of [false, true]) {
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: "user", content: `weather? ${stream} ${script.marker}` },
      ];
      const first = await agentClient().chat.completions.create({
        model: "aptix-agent/general",
        messages,
        tools: [weather],
      });
      const call = first.choices[0]?.message.tool_calls?.[0];
      if (!first.choices[0] || !call) throw new Error("no tool call");
      expect(first.usage?.total_tokens).toBe(110);
      messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "sunny" });
      let usage: OpenAI.CompletionUsage | undefined | null;
      if (stream) {
        const chunks = await agentClient().chat.completions.create({
          model: "aptix-agent/general",
          messages,
          tools: [weather],
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of chunks) usage = chunk.usage ?? usage;
      } else {
        usage = (
          await agentClient().chat.completions.create({ model: "aptix-agent/general", messages, tools: [weather] })
        ).usage;
      }
      expect([stream, usage?.prompt_tokens, usage?.total_tokens]).toEqual([stream, 200, 205]);
    }
  });
});

// The official SDKs read what the translation writes and write what it reads: the Anthropic SDK's request body
// parses and translates, and its stream accumulator rebuilds the message from translated chat chunks; the OpenAI
// SDK's request body translates the other way, and its stream helper rebuilds the completion from translated
// Anthropic events. Each client is given a fetch that answers in place of a server.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  ChatChunkIn,
  ChatChunksToMessageEvents,
  MessageEventsToChatChunks,
} from "../../src/translate/anthropic-chat-stream";
import {
  ChatCompletionIn,
  ChatRequestIn,
  chatResponseToMessage,
  messagesToChatRequest,
} from "../../src/translate/anthropic-to-chat";
import { chatRequestToMessages, messageToChatResponse } from "../../src/translate/chat-to-anthropic";
import { AnthropicMessage, MessageStreamEvent, MessagesRequest } from "../../src/wire/anthropic";

/** A fetch that keeps the request's JSON body and answers with `respond`. */
function fakeFetch(respond: () => Response) {
  const bodies: unknown[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    bodies.push(JSON.parse(String(init?.body)));
    return respond();
  };
  return { fetch, bodies };
}

const sse = (events: string[]) => new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });

const PNG = "iVBORw0KGgo=";

/** A chat completions stream: text, then two parallel tool calls with fragmented arguments, then usage. */
const CHAT_CHUNKS = [
  { choices: [{ index: 0, delta: { role: "assistant", content: "Let me " }, finish_reason: null }] },
  { choices: [{ index: 0, delta: { content: "look." }, finish_reason: null }] },
  {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "" } }],
        },
        finish_reason: null,
      },
    ],
  },
  {
    choices: [
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"path"' } }] }, finish_reason: null },
    ],
  },
  {
    choices: [
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':"a.md"}' } }] }, finish_reason: null },
    ],
  },
  {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "now", arguments: "{}" } }],
        },
        finish_reason: null,
      },
    ],
  },
  { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
  { choices: [], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } },
].map((chunk) =>
  ChatChunkIn.parse({ id: "chatcmpl-5", object: "chat.completion.chunk", created: 1, model: "gpt-x", ...chunk }),
);

describe("the Anthropic SDK against the translation", () => {
  it("sends a request the Messages schema parses and the translation maps", async () => {
    const { fetch, bodies } = fakeFetch(() => Response.json({}, { status: 500 }));
    const client = new Anthropic({ apiKey: "k", baseURL: "http://aptix.test", fetch, maxRetries: 0 });
    await client.messages
      .create({
        model: "claude-x",
        max_tokens: 64,
        system: [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }],
        tools: [{ name: "read", description: "Reads", input_schema: { type: "object", properties: {} } }],
        tool_choice: { type: "any", disable_parallel_tool_use: true },
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "what is this?" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
            ],
          },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "A", is_error: false }] },
        ],
      })
      .catch(() => undefined);
    const chat = messagesToChatRequest(MessagesRequest.parse(bodies[0]));
    expect(chat.ok && chat.value.messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
    ]);
  });

  it("reads a translated completion as a message", async () => {
    const completion = ChatCompletionIn.parse({
      id: "chatcmpl-1",
      choices: [{ index: 0, message: { role: "assistant", content: "Hi." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
    const translated = chatResponseToMessage(completion, "claude-x");
    const { fetch } = fakeFetch(() => Response.json(translated.ok ? translated.value : {}));
    const client = new Anthropic({ apiKey: "k", baseURL: "http://aptix.test", fetch, maxRetries: 0 });
    const message = await client.messages.create({
      model: "claude-x",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    expect([message.content, message.stop_reason, message.usage.output_tokens]).toEqual([
      [{ type: "text", text: "Hi." }],
      "end_turn",
      2,
    ]);
  });

  it("rebuilds text and two tool calls from a translated chat stream", async () => {
    const machine = new ChatChunksToMessageEvents({ model: "claude-x" });
    const events = [...CHAT_CHUNKS.flatMap((chunk) => machine.push(chunk)), ...machine.end()];
    const { fetch } = fakeFetch(() =>
      sse(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)),
    );
    const client = new Anthropic({ apiKey: "k", baseURL: "http://aptix.test", fetch, maxRetries: 0 });
    const stream = client.messages.stream({
      model: "claude-x",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    const message = AnthropicMessage.parse(await stream.finalMessage());
    expect([message.content, message.stop_reason, message.usage.input_tokens, message.usage.output_tokens]).toEqual([
      [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call_a", name: "read", input: { path: "a.md" } },
        { type: "tool_use", id: "call_b", name: "now", input: {} },
      ],
      "tool_use",
      30,
      12,
    ]);
  });
});

/** An Anthropic stream: text, one tool call with fragmented input, and usage. */
const ANTHROPIC_EVENTS = [
  {
    type: "message_start",
    message: {
      id: "msg_3",
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-x",
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 1 },
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Reading." } },
  { type: "content_block_stop", index: 0 },
  {
    type: "content_block_start",
    index: 1,
    content_block: { type: "tool_use", id: "toolu_a", name: "read", input: {} },
  },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"path":' } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"a.md"}' } },
  { type: "content_block_stop", index: 1 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: "message_stop" },
].map((event) => MessageStreamEvent.parse(event));

describe("the OpenAI SDK against the translation", () => {
  it("sends a request the translation maps to the Messages API", async () => {
    const { fetch, bodies } = fakeFetch(() => Response.json({}, { status: 500 }));
    const client = new OpenAI({ apiKey: "k", baseURL: "http://aptix.test/v1", fetch, maxRetries: 0 });
    await client.chat.completions
      .create({
        model: "claude-route",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }],
          },
          { role: "tool", tool_call_id: "c1", content: "A" },
        ],
        tools: [{ type: "function", function: { name: "read", parameters: { type: "object" } } }],
        max_completion_tokens: 99,
      })
      .catch(() => undefined);
    const translated = chatRequestToMessages(ChatRequestIn.parse(bodies[0]));
    const request = MessagesRequest.parse(translated.ok ? translated.value : {});
    expect([request.system, request.max_tokens, request.messages.map((message) => message.role)]).toEqual([
      "be brief",
      99,
      ["user", "assistant", "user"],
    ]);
  });

  it("reads a translated message as a completion", async () => {
    const message = AnthropicMessage.parse({
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } }],
      model: "claude-x",
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 4, output_tokens: 6 },
    });
    const { fetch } = fakeFetch(() => Response.json(messageToChatResponse(message, 1)));
    const client = new OpenAI({ apiKey: "k", baseURL: "http://aptix.test/v1", fetch, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    expect([
      completion.choices[0]?.message.tool_calls,
      completion.choices[0]?.finish_reason,
      completion.usage?.total_tokens,
    ]).toEqual([
      [{ id: "toolu_1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }],
      "tool_calls",
      10,
    ]);
  });

  it("rebuilds text, a tool call and usage from a translated Anthropic stream", async () => {
    const machine = new MessageEventsToChatChunks({ created: 1, includeUsage: true });
    const items = ANTHROPIC_EVENTS.flatMap((event) => machine.push(event));
    const { fetch } = fakeFetch(() =>
      sse([...items.map((item) => `data: ${JSON.stringify(item)}\n\n`), "data: [DONE]\n\n"]),
    );
    const client = new OpenAI({ apiKey: "k", baseURL: "http://aptix.test/v1", fetch, maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream_options: { include_usage: true },
    });
    const completion = await stream.finalChatCompletion();
    const message = completion.choices[0]?.message;
    expect([message?.content, message?.tool_calls, completion.choices[0]?.finish_reason, completion.usage]).toEqual([
      "Reading.",
      [{ id: "toolu_a", type: "function", function: { name: "read", arguments: '{"path":"a.md"}' } }],
      "tool_calls",
      { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
    ]);
  });
});

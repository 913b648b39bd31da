// The Anthropic <-> chat completions mapping, table by table: every content block each way, every stop and finish
// reason, usage, each refusal naming its param, whole streams each way, and errors for each status.
import { describe, expect, it } from "vitest";
import { errorBody } from "../../src/errors";
import {
  ChatChunkIn,
  ChatChunksToMessageEvents,
  MessageEventsToChatChunks,
  STREAM_CUT_MESSAGE,
} from "../../src/translate/anthropic-chat-stream";
import {
  anthropicErrorToOpenAI,
  ChatCompletionIn,
  ChatRequestIn,
  chatResponseToMessage,
  messagesToChatRequest,
  openAIErrorToAnthropic,
  TOOL_ERROR_PREFIX,
  type Translated,
} from "../../src/translate/anthropic-to-chat";
import {
  chatRequestToMessages,
  DEFAULT_MAX_TOKENS,
  messageToChatResponse,
} from "../../src/translate/chat-to-anthropic";
import {
  AnthropicErrorBody,
  AnthropicMessage,
  MessageStreamEvent,
  MessagesRequest,
  type StopReason,
} from "../../src/wire/anthropic";

/** The value of a translation that must succeed. */
function value<T>(result: Translated<T>): T {
  if (!result.ok) throw new Error(`refused ${result.param}: ${result.message}`);
  return result.value;
}

/** An Anthropic request of these messages (and other fields), parsed as a route would. */
const anthropicRequest = (fields: Record<string, unknown>) =>
  MessagesRequest.parse({ model: "claude-x", max_tokens: 100, messages: [{ role: "user", content: "hi" }], ...fields });

/** A chat request of these fields, parsed as a route would. */
const chatRequest = (fields: Record<string, unknown>) =>
  ChatRequestIn.parse({ model: "gpt-x", messages: [{ role: "user", content: "hi" }], ...fields });

const completion = (message: Record<string, unknown>, finish = "stop", extra: Record<string, unknown> = {}) =>
  ChatCompletionIn.parse({
    id: "chatcmpl-1",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish, ...extra }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });

const anthropicMessage = (fields: Record<string, unknown>) =>
  AnthropicMessage.parse({
    id: "msg_1",
    type: "message",
    role: "assistant",
    content: [],
    model: "claude-x",
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
    ...fields,
  });

const PNG = "iVBORw0KGgo=";

describe("an Anthropic request as a chat completions request", () => {
  it.each([
    ["a string", "hello", [{ role: "user", content: "hello" }]],
    ["a text block", [{ type: "text", text: "hello" }], [{ role: "user", content: "hello" }]],
    [
      "a base64 image block, as a data URL",
      [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }],
      [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] }],
    ],
    [
      "a url image block, as its URL",
      [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }],
      [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }],
    ],
    [
      "a tool_result block, as a tool message",
      [{ type: "tool_result", tool_use_id: "toolu_1", content: "42" }],
      [{ role: "tool", tool_call_id: "toolu_1", content: "42" }],
    ],
    [
      "a tool_result of text blocks, as their text",
      [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [
            { type: "text", text: "4" },
            { type: "text", text: "2" },
          ],
        },
      ],
      [{ role: "tool", tool_call_id: "toolu_1", content: "4\n2" }],
    ],
    [
      "a tool_result with is_error, marked in its text",
      [{ type: "tool_result", tool_use_id: "toolu_1", content: "no such file", is_error: true }],
      [{ role: "tool", tool_call_id: "toolu_1", content: `${TOOL_ERROR_PREFIX}no such file` }],
    ],
    [
      "tool results and text, the tool messages first in order",
      [
        { type: "tool_result", tool_use_id: "a", content: "1" },
        { type: "tool_result", tool_use_id: "b", content: "2" },
        { type: "text", text: "go on" },
      ],
      [
        { role: "tool", tool_call_id: "a", content: "1" },
        { role: "tool", tool_call_id: "b", content: "2" },
        { role: "user", content: "go on" },
      ],
    ],
  ])("maps a user message of %s", (_name, content, expected) => {
    const chat = value(messagesToChatRequest(anthropicRequest({ messages: [{ role: "user", content }] })));
    expect(chat.messages).toEqual(expected);
  });

  it.each([
    ["a text block", [{ type: "text", text: "sure" }], [{ role: "assistant", content: "sure" }]],
    [
      "text and tool_use blocks, as content and tool calls with JSON arguments",
      [
        { type: "text", text: "looking" },
        { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.md" } },
      ],
      [
        {
          role: "assistant",
          content: "looking",
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "read", arguments: '{"path":"a.md"}' } }],
        },
      ],
    ],
    [
      "a tool_use block alone, with null content",
      [{ type: "tool_use", id: "toolu_1", name: "now", input: {} }],
      [
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "toolu_1", type: "function", function: { name: "now", arguments: "{}" } }],
        },
      ],
    ],
    [
      "thinking and redacted_thinking blocks, dropped",
      [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "redacted_thinking", data: "xyz" },
        { type: "text", text: "answer" },
      ],
      [{ role: "assistant", content: "answer" }],
    ],
  ])("maps an assistant message of %s", (_name, content, expected) => {
    const messages = [
      { role: "user", content: "q" },
      { role: "assistant", content },
    ];
    const chat = value(messagesToChatRequest(anthropicRequest({ messages })));
    expect(chat.messages.slice(1)).toEqual(expected);
  });

  it.each([
    ["a string", "be brief", "be brief"],
    [
      "text blocks, joined by a blank line",
      [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
      "a\n\nb",
    ],
  ])("puts a system of %s in a system message first", (_name, system, expected) => {
    const chat = value(messagesToChatRequest(anthropicRequest({ system })));
    expect(chat.messages[0]).toEqual({ role: "system", content: expected });
  });

  it.each([
    ["auto", { type: "auto" }, "auto"],
    ["any, as required", { type: "any" }, "required"],
    ["none", { type: "none" }, "none"],
    ["tool, as the function named", { type: "tool", name: "read" }, { type: "function", function: { name: "read" } }],
  ])("maps tool_choice %s", (_name, toolChoice, expected) => {
    const tools = [{ name: "read", description: "Reads", input_schema: { type: "object" } }];
    const chat = value(messagesToChatRequest(anthropicRequest({ tools, tool_choice: toolChoice })));
    expect(chat.tool_choice).toEqual(expected);
    expect(chat.parallel_tool_calls).toBeUndefined();
  });

  it("maps disable_parallel_tool_use to parallel_tool_calls false", () => {
    const tools = [{ name: "read", input_schema: { type: "object" } }];
    const toolChoice = { type: "auto", disable_parallel_tool_use: true };
    const chat = value(messagesToChatRequest(anthropicRequest({ tools, tool_choice: toolChoice })));
    expect(chat.parallel_tool_calls).toBe(false);
  });

  it("maps tools to function tools with their input schema as parameters", () => {
    const schema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
    const tools = [{ name: "read", description: "Reads a file", input_schema: schema }];
    const chat = value(messagesToChatRequest(anthropicRequest({ tools })));
    expect(chat.tools).toEqual([
      { type: "function", function: { name: "read", description: "Reads a file", parameters: schema } },
    ]);
  });

  it("maps sampling, stop sequences and streaming, and drops metadata.user_id", () => {
    const fields = { temperature: 0.5, top_p: 0.9, stop_sequences: ["END"], stream: true, metadata: { user_id: "u1" } };
    const chat = value(messagesToChatRequest(anthropicRequest(fields)));
    expect(chat).toEqual({
      model: "claude-x",
      messages: [{ role: "user", content: "hi" }],
      max_completion_tokens: 100,
      temperature: 0.5,
      top_p: 0.9,
      stop: ["END"],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it.each([
    ["max_completion_tokens", undefined],
    ["max_tokens", "max_tokens"],
    ["max_completion_tokens", "max_completion_tokens"],
  ] as const)("sends max_tokens as %s when the route asks for %s", (field, maxTokensField) => {
    const options = maxTokensField ? { maxTokensField, model: "upstream-model" } : { model: "upstream-model" };
    const chat = value(messagesToChatRequest(anthropicRequest({}), options));
    expect(chat[field]).toBe(100);
    expect(chat.model).toBe("upstream-model");
  });

  it.each([
    ["top_k", { top_k: 5 }, "top_k"],
    [
      "MCP servers for the model (the MCP connector)",
      { mcp_servers: [{ type: "url", url: "https://mcp.example/sse", name: "x" }] },
      "mcp_servers",
    ],
    ["a code execution container", { container: "container_1" }, "container"],
    ["extended thinking", { thinking: { type: "enabled", budget_tokens: 2000 } }, "thinking"],
    ["a server tool", { tools: [{ type: "web_search_20250305", name: "web_search" }] }, "tools[0].type"],
    [
      "a document block",
      { messages: [{ role: "user", content: [{ type: "document", source: { type: "text", data: "x" } }] }] },
      "messages[0].content[0]",
    ],
    [
      "a block type with no equivalent",
      { messages: [{ role: "user", content: [{ type: "search_result", source: "s", title: "t", content: [] }] }] },
      "messages[0].content[0]",
    ],
    [
      "an image inside a tool result",
      {
        messages: [
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "t",
                content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }],
              },
            ],
          },
        ],
      },
      "messages[0].content[0].content[0]",
    ],
  ])("refuses %s, naming its param", (_name, fields, param) => {
    const result = messagesToChatRequest(anthropicRequest(fields));
    expect(result).toMatchObject({ ok: false, param });
  });

  it("accepts thinking that is disabled", () => {
    expect(messagesToChatRequest(anthropicRequest({ thinking: { type: "disabled" } })).ok).toBe(true);
  });
});

describe("a chat completion as an Anthropic message", () => {
  it("maps text to a text block, with the id, model and usage", () => {
    const message = value(chatResponseToMessage(completion({ content: "Hello." }), "claude-x"));
    expect(AnthropicMessage.parse(message)).toEqual({
      id: "msg_chatcmpl-1",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "Hello." }],
      model: "claude-x",
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: null, cache_read_input_tokens: null },
    });
  });

  it("maps tool calls to tool_use blocks with parsed input", () => {
    const toolCalls = [
      { id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.md"}' } },
      { id: "call_2", type: "function", function: { name: "now", arguments: "" } },
    ];
    const message = value(
      chatResponseToMessage(completion({ content: null, tool_calls: toolCalls }, "tool_calls"), "m"),
    );
    expect(message.content).toEqual([
      { type: "tool_use", id: "call_1", name: "read", input: { path: "a.md" } },
      { type: "tool_use", id: "call_2", name: "now", input: {} },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("refuses tool call arguments that are not a JSON object, naming them", () => {
    const toolCalls = [{ id: "c", type: "function", function: { name: "read", arguments: "[1" } }];
    const result = chatResponseToMessage(completion({ tool_calls: toolCalls }, "tool_calls"), "m");
    expect(result).toMatchObject({ ok: false, param: "choices[0].message.tool_calls[0].function.arguments" });
  });

  it.each([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["function_call", "tool_use"],
    ["content_filter", "refusal"],
  ])("maps finish_reason %s to stop_reason %s", (finish, stopReason) => {
    const message = value(chatResponseToMessage(completion({ content: "x" }, finish), "m"));
    expect(message.stop_reason).toBe(stopReason);
  });

  it("reports the stop sequence when the upstream names the one that ended the answer", () => {
    const message = value(chatResponseToMessage(completion({ content: "x" }, "stop", { stop_reason: "END" }), "m"));
    expect([message.stop_reason, message.stop_sequence]).toEqual(["stop_sequence", "END"]);
  });

  it("maps a refusal to a text block and stop_reason refusal", () => {
    const message = value(chatResponseToMessage(completion({ content: null, refusal: "I can't." }), "m"));
    expect([message.content, message.stop_reason]).toEqual([[{ type: "text", text: "I can't." }], "refusal"]);
  });

  it("counts cached prompt tokens as cache reads, apart from input_tokens", () => {
    const resp = ChatCompletionIn.parse({
      ...completion({ content: "x" }),
      usage: {
        prompt_tokens: 100,
        completion_tokens: 7,
        total_tokens: 107,
        prompt_tokens_details: { cached_tokens: 60 },
      },
    });
    const message = value(chatResponseToMessage(resp, "m"));
    expect(message.usage).toEqual({
      input_tokens: 40,
      output_tokens: 7,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: 60,
    });
  });
});

describe("a chat completions request as an Anthropic request", () => {
  it.each([
    ["a string", "hello", "hello"],
    ["a text part", [{ type: "text", text: "hello" }], [{ type: "text", text: "hello" }]],
    [
      "a data URL image, as a base64 image block",
      [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }],
      [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }],
    ],
    [
      "an https image, as a url image block",
      [{ type: "image_url", image_url: { url: "https://example.com/a.png", detail: "high" } }],
      [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }],
    ],
  ])("maps user content of %s", (_name, content, expected) => {
    const messages = value(chatRequestToMessages(chatRequest({ messages: [{ role: "user", content }] }))).messages;
    expect(messages).toEqual([{ role: "user", content: expected }]);
  });

  it("maps system and developer messages to the system text", () => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "developer", content: [{ type: "text", text: "use tools" }] },
      { role: "user", content: "hi" },
    ];
    const req = value(chatRequestToMessages(chatRequest({ messages })));
    expect([req.system, req.messages]).toEqual(["be brief\n\nuse tools", [{ role: "user", content: "hi" }]]);
  });

  it("maps tool calls to tool_use blocks and consecutive tool messages to one user message of tool results", () => {
    const messages = [
      { role: "user", content: "both" },
      {
        role: "assistant",
        content: "checking",
        tool_calls: [
          { id: "a", type: "function", function: { name: "read", arguments: '{"path":"x"}' } },
          { id: "b", type: "function", function: { name: "now", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "tool", tool_call_id: "b", content: [{ type: "text", text: "2" }] },
      { role: "user", content: "thanks" },
    ];
    const req = value(chatRequestToMessages(chatRequest({ messages })));
    expect(req.messages).toEqual([
      { role: "user", content: "both" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "checking" },
          { type: "tool_use", id: "a", name: "read", input: { path: "x" } },
          { type: "tool_use", id: "b", name: "now", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "1" },
          { type: "tool_result", tool_use_id: "b", content: "2" },
        ],
      },
      { role: "user", content: "thanks" },
    ]);
  });

  it.each([
    ["auto", "auto", { type: "auto" }],
    ["required, to any", "required", { type: "any" }],
    ["none", "none", { type: "none" }],
    ["a function, as tool", { type: "function", function: { name: "read" } }, { type: "tool", name: "read" }],
  ])("maps tool_choice %s", (_name, toolChoice, expected) => {
    const tools = [{ type: "function", function: { name: "read", parameters: { type: "object" } } }];
    const req = value(chatRequestToMessages(chatRequest({ tools, tool_choice: toolChoice })));
    expect(req.tool_choice).toEqual(expected);
    expect(req.tools).toEqual([{ name: "read", input_schema: { type: "object" } }]);
  });

  it("maps parallel_tool_calls false to disable_parallel_tool_use", () => {
    const tools = [{ type: "function", function: { name: "read" } }];
    const req = value(chatRequestToMessages(chatRequest({ tools, parallel_tool_calls: false })));
    expect(req.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
  });

  it.each([
    ["max_completion_tokens", { max_completion_tokens: 50, max_tokens: 70 }, {}, 50],
    ["max_tokens", { max_tokens: 70 }, {}, 70],
    ["the default when neither is sent", {}, {}, DEFAULT_MAX_TOKENS],
    ["the route's default when neither is sent", {}, { defaultMaxTokens: 1000 }, 1000],
  ])("takes max_tokens from %s", (_name, fields, options, expected) => {
    expect(value(chatRequestToMessages(chatRequest(fields), options)).max_tokens).toBe(expected);
  });

  it("maps sampling, stop, stream and user", () => {
    const fields = { temperature: 0.3, top_p: 0.8, stop: "END", stream: true, user: "u1", seed: 7 };
    const req = value(chatRequestToMessages(chatRequest(fields), { model: "claude-route" }));
    expect(req).toEqual({
      model: "claude-route",
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: [{ role: "user", content: "hi" }],
      temperature: 0.3,
      top_p: 0.8,
      stop_sequences: ["END"],
      stream: true,
      metadata: { user_id: "u1" },
    });
    expect(MessagesRequest.safeParse(req).success).toBe(true);
  });

  it.each([
    ["n above 1", { n: 2 }, "n"],
    ["logprobs", { logprobs: true }, "logprobs"],
    ["top_logprobs", { top_logprobs: 3 }, "top_logprobs"],
    ["a json_schema response_format", { response_format: { type: "json_schema", json_schema: {} } }, "response_format"],
    ["a json_object response_format", { response_format: { type: "json_object" } }, "response_format"],
    ["presence_penalty", { presence_penalty: 0.5 }, "presence_penalty"],
    ["frequency_penalty", { frequency_penalty: 0.5 }, "frequency_penalty"],
    ["logit_bias", { logit_bias: { "42": 10 } }, "logit_bias"],
    ["a temperature above 1", { temperature: 1.5 }, "temperature"],
    [
      "a system message after the conversation began",
      {
        messages: [
          { role: "user", content: "a" },
          { role: "system", content: "b" },
        ],
      },
      "messages[1].role",
    ],
    [
      "an audio part",
      { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "x", format: "wav" } }] }] },
      "messages[0].content[0]",
    ],
    [
      "an image of a type Anthropic does not take",
      {
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/bmp;base64,Qk0=" } }] },
        ],
      },
      "messages[0].content[0]",
    ],
    [
      "tool call arguments that are not JSON",
      {
        messages: [
          { role: "user", content: "a" },
          { role: "assistant", tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "{" } }] },
        ],
      },
      "messages[1].tool_calls[0].function.arguments",
    ],
    ["only system messages", { messages: [{ role: "system", content: "a" }] }, "messages"],
  ])("refuses %s, naming its param", (_name, fields, param) => {
    expect(chatRequestToMessages(chatRequest(fields))).toMatchObject({ ok: false, param });
  });

  it("accepts a text response_format and an n of 1", () => {
    expect(chatRequestToMessages(chatRequest({ response_format: { type: "text" }, n: 1 })).ok).toBe(true);
  });
});

describe("an Anthropic message as a chat completion", () => {
  it("maps text and tool_use blocks to content and tool calls, dropping thinking", () => {
    const msg = anthropicMessage({
      content: [
        { type: "thinking", thinking: "hmm", signature: "s" },
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.md" } },
      ],
      stop_reason: "tool_use",
    });
    const resp = messageToChatResponse(msg, 1700000000);
    expect(resp.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: "Reading.",
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "read", arguments: '{"path":"a.md"}' } }],
        refusal: null,
      },
      finish_reason: "tool_calls",
      logprobs: null,
    });
    expect([resp.id, resp.object, resp.created, resp.model]).toEqual([
      "msg_1",
      "chat.completion",
      1700000000,
      "claude-x",
    ]);
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
    ["pause_turn", "stop"],
  ] satisfies [StopReason, string][])("maps stop_reason %s to finish_reason %s", (stopReason, finish) => {
    const resp = messageToChatResponse(
      anthropicMessage({ content: [{ type: "text", text: "x" }], stop_reason: stopReason }),
      1,
    );
    expect(resp.choices[0]?.finish_reason).toBe(finish);
  });

  it.each([
    [
      "without cache",
      { input_tokens: 10, output_tokens: 5 },
      { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ],
    [
      "with cache reads and writes counted as prompt tokens",
      { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 20, cache_read_input_tokens: 30 },
      { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65, prompt_tokens_details: { cached_tokens: 30 } },
    ],
  ])("maps usage %s", (_name, usage, expected) => {
    expect(messageToChatResponse(anthropicMessage({ usage }), 1).usage).toEqual(expected);
  });
});

/** The chunks of a chat completions stream, parsed as a route would. */
const chunks = (...deltas: Record<string, unknown>[]) =>
  deltas.map((chunk) => ChatChunkIn.parse({ id: "chatcmpl-9", object: "chat.completion.chunk", ...chunk }));
const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = { choices: [], usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 } };

function toMessageEvents(stream: ReturnType<typeof chunks>): MessageStreamEvent[] {
  const machine = new ChatChunksToMessageEvents({ model: "claude-x" });
  const events = [...stream.flatMap((chunk) => machine.push(chunk)), ...machine.end()];
  return events.map((event) => MessageStreamEvent.parse(event));
}

describe("a chat completions stream as Anthropic events", () => {
  it("streams a text answer as one text block, then the stop reason and usage", () => {
    const stream = chunks(
      choice({ role: "assistant", content: "" }),
      choice({ content: "Hel" }),
      choice({ content: "lo." }),
      choice({}, "stop"),
      usageChunk,
    );
    expect(toMessageEvents(stream)).toEqual([
      {
        type: "message_start",
        message: {
          id: "msg_chatcmpl-9",
          type: "message",
          role: "assistant",
          content: [],
          model: "claude-x",
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0 },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo." } },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { input_tokens: 12, output_tokens: 8, cache_creation_input_tokens: null, cache_read_input_tokens: null },
      },
      { type: "message_stop" },
    ]);
  });

  it("streams two parallel tool calls with fragmented arguments as two tool_use blocks", () => {
    const call = (index: number, fields: Record<string, unknown>) => choice({ tool_calls: [{ index, ...fields }] });
    const stream = chunks(
      choice({ role: "assistant", content: "Let me look." }),
      call(0, { id: "call_a", type: "function", function: { name: "read", arguments: "" } }),
      call(0, { function: { arguments: '{"pa' } }),
      call(0, { function: { arguments: 'th":"a.md"}' } }),
      call(1, { id: "call_b", type: "function", function: { name: "now", arguments: "{" } }),
      call(1, { function: { arguments: "}" } }),
      choice({}, "tool_calls"),
      usageChunk,
    );
    const events = toMessageEvents(stream);
    expect(events.slice(1, -2)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Let me look." } },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "call_a", name: "read", input: {} },
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"pa' } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'th":"a.md"}' } },
      { type: "content_block_stop", index: 1 },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "call_b", name: "now", input: {} },
      },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{" } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "}" } },
      { type: "content_block_stop", index: 2 },
    ]);
    expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "tool_use" } });
  });

  it.each([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
  ])("streams finish_reason %s as stop_reason %s", (finish, stopReason) => {
    const events = toMessageEvents(chunks(choice({ content: "x" }), choice({}, finish), usageChunk));
    expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: stopReason } });
  });

  it("streams the stop sequence the upstream names", () => {
    const stop = { choices: [{ index: 0, delta: {}, finish_reason: "stop", stop_reason: "END" }] };
    const events = toMessageEvents(chunks(choice({ content: "x" }), stop, usageChunk));
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: "stop_sequence", stop_sequence: "END" } });
  });

  it("ends the message in the chunk that carries both the finish reason and the usage", () => {
    const machine = new ChatChunksToMessageEvents({ model: "m" });
    const [first, last] = chunks(choice({ content: "x" }), { ...choice({}, "stop"), usage: usageChunk.usage });
    const events = [...(first ? machine.push(first) : []), ...(last ? machine.push(last) : [])];
    expect([events.at(-1)?.type, machine.end()]).toEqual(["message_stop", []]);
  });

  it("ends the message at the end of a stream without a usage chunk", () => {
    const events = toMessageEvents(chunks(choice({ content: "x" }), choice({}, "length")));
    expect(events.slice(-2)).toEqual([
      {
        type: "message_delta",
        delta: { stop_reason: "max_tokens", stop_sequence: null },
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null },
      },
      { type: "message_stop" },
    ]);
  });

  it("sends an error event for a stream that ends before its finish reason", () => {
    const events = toMessageEvents(chunks(choice({ content: "x" })));
    expect(events.at(-1)).toEqual({ type: "error", error: { type: "api_error", message: STREAM_CUT_MESSAGE } });
  });

  it("sends an error event for an error chunk, and nothing after it", () => {
    const machine = new ChatChunksToMessageEvents({ model: "m" });
    const events = [
      ...machine.push(chunks({ error: { message: "boom" } })[0] ?? ChatChunkIn.parse({})),
      ...machine.end(),
    ];
    expect(events.map((event) => event.type)).toEqual(["message_start", "error"]);
  });
});

function toChatChunks(events: Record<string, unknown>[], includeUsage: boolean) {
  const machine = new MessageEventsToChatChunks({ created: 1700000000, includeUsage });
  return events.flatMap((event) => machine.push(MessageStreamEvent.parse(event)));
}

const messageStart = {
  type: "message_start",
  message: {
    id: "msg_7",
    type: "message",
    role: "assistant",
    content: [],
    model: "claude-x",
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 25, output_tokens: 1, cache_read_input_tokens: 5 },
  },
};

describe("an Anthropic stream as chat completion chunks", () => {
  const toolStream = [
    messageStart,
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig" } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "ping" },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Reading." } },
    { type: "content_block_stop", index: 1 },
    {
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_a", name: "read", input: {} },
    },
    { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "" } },
    { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"path":' } },
    { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '"a.md"}' } },
    { type: "content_block_stop", index: 2 },
    {
      type: "content_block_start",
      index: 3,
      content_block: { type: "tool_use", id: "toolu_b", name: "now", input: {} },
    },
    { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: "{}" } },
    { type: "content_block_stop", index: 3 },
    { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 40 } },
    { type: "message_stop" },
  ];

  it("streams text, then each tool call's index, id and name, then its argument fragments, then the finish", () => {
    const deltas = toChatChunks(toolStream, false).map((chunk) =>
      "choices" in chunk ? [chunk.choices[0]?.delta, chunk.choices[0]?.finish_reason] : chunk,
    );
    expect(deltas).toEqual([
      [{ role: "assistant", content: "" }, null],
      [{ content: "Reading." }, null],
      [
        { tool_calls: [{ index: 0, id: "toolu_a", type: "function", function: { name: "read", arguments: "" } }] },
        null,
      ],
      [{ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }, null],
      [{ tool_calls: [{ index: 0, function: { arguments: '"a.md"}' } }] }, null],
      [{ tool_calls: [{ index: 1, id: "toolu_b", type: "function", function: { name: "now", arguments: "" } }] }, null],
      [{ tool_calls: [{ index: 1, function: { arguments: "{}" } }] }, null],
      [{}, "tool_calls"],
    ]);
  });

  it("ends with a usage chunk of no choices when the client asked for usage, and null usage before it", () => {
    const stream = toChatChunks(toolStream, true);
    expect(stream.slice(0, -1).every((chunk) => "usage" in chunk && chunk.usage === null)).toBe(true);
    expect(stream.at(-1)).toEqual({
      id: "msg_7",
      object: "chat.completion.chunk",
      created: 1700000000,
      model: "claude-x",
      choices: [],
      usage: {
        prompt_tokens: 30,
        completion_tokens: 40,
        total_tokens: 70,
        prompt_tokens_details: { cached_tokens: 5 },
      },
    });
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["max_tokens", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
    ["pause_turn", "stop"],
    ["model_context_window_exceeded", "length"],
  ])("streams stop_reason %s as finish_reason %s", (stopReason, finish) => {
    const messageDelta = { type: "message_delta", delta: { stop_reason: stopReason }, usage: { output_tokens: 1 } };
    const [item] = toChatChunks([messageStart, messageDelta], false).slice(1);
    expect(item && "choices" in item ? item.choices[0]?.finish_reason : null).toBe(finish);
  });

  it("sends no usage chunk when the client did not ask for usage", () => {
    const stream = toChatChunks(toolStream, false);
    expect(stream.every((chunk) => "choices" in chunk && chunk.choices.length === 1 && !("usage" in chunk))).toBe(true);
  });

  it.each([
    ["overloaded_error", "upstream_error"],
    ["rate_limit_error", "rate_limit_error"],
  ])("maps an error event of %s to an OpenAI error of type %s", (anthropicType, openAIType) => {
    const [item] = toChatChunks(
      [messageStart, { type: "error", error: { type: anthropicType, message: "busy" } }],
      false,
    ).slice(1);
    expect(item).toEqual({ error: { message: "busy", type: openAIType, code: anthropicType, param: null } });
  });
});

describe("errors", () => {
  it.each([
    [400, "invalid_request", "invalid_request_error"],
    [401, "invalid_api_key", "authentication_error"],
    [403, "insufficient_scope", "permission_error"],
    [404, "model_not_found", "not_found_error"],
    [413, "request_too_large", "request_too_large"],
    [429, "rate_limit_exceeded", "rate_limit_error"],
    [500, "internal_error", "api_error"],
    [502, "upstream_unreachable", "api_error"],
    [504, "upstream_timeout", "timeout_error"],
  ] as const)("maps our %i %s to Anthropic's %s", (status, code, anthropicType) => {
    const body = AnthropicErrorBody.parse(openAIErrorToAnthropic(status, errorBody(code, "Went wrong.")));
    expect(body).toEqual({ type: "error", error: { type: anthropicType, message: "Went wrong." } });
  });

  it("names the param at the start of the Anthropic error's message", () => {
    const body = openAIErrorToAnthropic(400, errorBody("invalid_request", "Is not a string.", "messages[0].content"));
    expect(body.error.message).toBe("messages[0].content: Is not a string.");
  });

  it.each([
    [400, "invalid_request_error", 400, "invalid_request_error"],
    [401, "authentication_error", 401, "authentication_error"],
    [402, "billing_error", 402, "rate_limit_error"],
    [403, "permission_error", 403, "permission_error"],
    [404, "not_found_error", 404, "not_found_error"],
    [413, "request_too_large", 413, "invalid_request_error"],
    [429, "rate_limit_error", 429, "rate_limit_error"],
    [500, "api_error", 500, "upstream_error"],
    [504, "timeout_error", 504, "upstream_error"],
    [529, "overloaded_error", 503, "upstream_error"],
    [418, "some_new_error", 418, "invalid_request_error"],
  ])("maps Anthropic's %i %s to status %i and type %s", (status, type, openAIStatus, openAIType) => {
    const mapped = anthropicErrorToOpenAI(status, { type: "error", error: { type, message: "Said so." } });
    expect(mapped).toEqual({
      status: openAIStatus,
      body: { error: { message: "Said so.", type: openAIType, code: type, param: null } },
    });
  });
});

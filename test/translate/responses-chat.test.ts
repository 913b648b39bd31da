// The Responses API mapped onto the chat completions door and back: requests as chat requests (or refusals naming
// the param), the door's completion, error and chunks as response objects and stream events, and the official
// `openai` SDK reading what the mapping writes (responses.create and responses.stream through a custom fetch).
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { errorBody } from "../../src/errors";
import { type DoorChunk, ResponsesStreamMapper } from "../../src/translate/chat-chunks-to-responses";
import {
  chatCompletionToResponse,
  type DoorCompletion,
  failedResponse,
  type ResponseMeta,
  responseEcho,
  responsesToChatRequest,
} from "../../src/translate/responses-to-chat";
import { chatCompletion, chunkEvent, type OpenAIToolCall, usageEvent } from "../../src/wire/openai";
import { ResponsesRequest, type ResponsesStreamEvent, responsesEventSse } from "../../src/wire/responses";

const MODEL = "aptix-agent/workspace";
const BASE = { id: "chatcmpl-1", created: 1_700_000_000, model: MODEL };

function parse(body: Record<string, unknown>) {
  return ResponsesRequest.parse({ model: MODEL, ...body });
}

function chat(body: Record<string, unknown>) {
  const outcome = responsesToChatRequest(parse(body));
  if (!outcome.ok) throw new Error(`refused ${outcome.param}: ${outcome.message}`);
  return outcome;
}

/** A response's fixed identity, with item ids counted (msg_1, fc_2...). */
function meta(body: Record<string, unknown> = {}): ResponseMeta {
  let n = 0;
  return {
    id: "resp_1",
    createdAt: 1_700_000_000,
    model: MODEL,
    echo: responseEcho(parse({ input: "hi", ...body })),
    newItemId: (prefix) => `${prefix}_${++n}`,
  };
}

const call = (id: string, name: string, args: string): OpenAIToolCall => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

function completion(
  content: string | null,
  toolCalls: OpenAIToolCall[] = [],
  finish = toolCalls.length > 0 ? "tool_calls" : "stop",
): DoorCompletion {
  return chatCompletion(BASE, {
    content,
    toolCalls,
    finish,
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
  });
}

/** The chunks the door writes (through its own builders), parsed as a client reads them. */
function chunk(delta: Record<string, unknown>, finish: string | null = null): DoorChunk {
  return JSON.parse(chunkEvent(BASE, delta, finish, true).slice("data: ".length));
}
const usageChunk = (): DoorChunk =>
  JSON.parse(usageEvent(BASE, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }).slice("data: ".length));

function mapStream(chunks: DoorChunk[], body: Record<string, unknown> = {}): ResponsesStreamEvent[] {
  const mapper = new ResponsesStreamMapper(meta(body));
  return [...mapper.start(), ...chunks.flatMap((c) => mapper.push(c)), ...mapper.end()];
}

const TEXT_CHUNKS = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Hello" }),
  chunk({ content: ", world" }),
  chunk({}, "stop"),
  usageChunk(),
];

const TWO_CALLS_CHUNKS = [
  chunk({ role: "assistant", content: "" }),
  chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"a.txt"}' } }] }),
  chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "list", arguments: '{"di' } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: 'r":"."}' } }] }),
  chunk({}, "tool_calls"),
  usageChunk(),
];

/** An SDK client whose every request is answered by `answer`. */
function sdkClient(answer: () => Response) {
  return new OpenAI({ baseURL: "http://responses.test/v1", apiKey: "k", fetch: async () => answer() });
}

function sseResponse(events: ResponsesStreamEvent[]): Response {
  return new Response(events.map(responsesEventSse).join(""), { headers: { "content-type": "text/event-stream" } });
}

describe("a Responses request as a chat completions request", () => {
  it.each([
    { name: "a string input is one user message", input: "hello", messages: [{ role: "user", content: "hello" }] },
    {
      name: "a message item keeps its role and its text parts are joined",
      input: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "a" },
            { type: "input_text", text: "b" },
          ],
        },
      ],
      messages: [{ role: "user", content: "ab" }],
    },
    {
      name: "a message without a type (the SDK's easy input message) is a message",
      input: [{ role: "developer", content: "be brief" }],
      messages: [{ role: "developer", content: "be brief" }],
    },
    {
      name: "an earlier answer's output_text is an assistant message",
      input: [
        { type: "message", role: "assistant", id: "msg_9", content: [{ type: "output_text", text: "hi there" }] },
      ],
      messages: [{ role: "assistant", content: "hi there" }],
    },
    {
      name: "a function call joins the assistant message before it as a tool call",
      input: [
        { role: "assistant", content: "reading" },
        { type: "function_call", call_id: "call_1", name: "read", arguments: "{}" },
      ],
      messages: [{ role: "assistant", content: "reading", tool_calls: [call("call_1", "read", "{}")] }],
    },
    {
      name: "function calls without a message before them are one assistant message with no text",
      input: [
        { type: "function_call", call_id: "call_1", name: "read", arguments: "{}" },
        { type: "function_call", call_id: "call_2", name: "list", arguments: '{"dir":"."}' },
      ],
      messages: [
        {
          role: "assistant",
          content: null,
          tool_calls: [call("call_1", "read", "{}"), call("call_2", "list", '{"dir":"."}')],
        },
      ],
    },
    {
      name: "a function call output is a tool message for its call",
      input: [{ type: "function_call_output", call_id: "call_1", output: '{"ok":true}' }],
      messages: [{ role: "tool", tool_call_id: "call_1", content: '{"ok":true}' }],
    },
    {
      name: "a function call output in text parts is their text",
      input: [{ type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "done" }] }],
      messages: [{ role: "tool", tool_call_id: "call_1", content: "done" }],
    },
  ])("$name", ({ input, messages }) => {
    expect(chat({ input }).chat.messages).toEqual(messages);
  });

  it("puts the instructions first, as a system message", () => {
    expect(chat({ instructions: "You are terse.", input: "hi" }).chat.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "hi" },
    ]);
  });

  it("declares function tools as chat completions function tools", () => {
    const parameters = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
    const tools = [{ type: "function", name: "read", description: "Reads a file.", parameters, strict: true }];
    expect(chat({ input: "hi", tools }).chat.tools).toEqual([
      { type: "function", function: { name: "read", description: "Reads a file.", parameters, strict: true } },
    ]);
  });

  it.each([
    { choice: "auto", mapped: "auto" },
    { choice: "none", mapped: "none" },
    { choice: "required", mapped: "required" },
    { choice: { type: "function", name: "read" }, mapped: { type: "function", function: { name: "read" } } },
  ])("maps tool_choice $choice", ({ choice, mapped }) => {
    expect(chat({ input: "hi", tool_choice: choice }).chat.tool_choice).toEqual(mapped);
  });

  it("carries the sampling fields and max_output_tokens as chat completions spells them", () => {
    const { chat: request } = chat({
      input: "hi",
      max_output_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      metadata: { ticket: "7" },
      user: "u-1",
    });
    expect(request).toMatchObject({
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      metadata: { ticket: "7" },
      user: "u-1",
    });
  });

  it("asks a streamed request's chat stream for its usage", () => {
    expect(chat({ input: "hi", stream: true }).chat).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("hands back previous_response_id and store beside the chat request", () => {
    const outcome = chat({ input: "go on", previous_response_id: "resp_0", store: false });
    expect([outcome.previousResponseId, outcome.store, "previous_response_id" in outcome.chat]).toEqual([
      "resp_0",
      false,
      false,
    ]);
  });

  it("stores by default, as the Responses API does", () => {
    expect(chat({ input: "hi" }).store).toBe(true);
  });
});

describe("what a Responses request cannot ask, refused naming its param", () => {
  it.each([
    { param: "conversation", body: { conversation: "conv_1" } },
    { param: "prompt", body: { prompt: { id: "pmpt_1" } } },
    { param: "background", body: { background: true } },
    { param: "include", body: { include: ["reasoning.encrypted_content"] } },
    { param: "top_logprobs", body: { top_logprobs: 2 } },
    { param: "max_tool_calls", body: { max_tool_calls: 3 } },
    { param: "truncation", body: { truncation: "auto" } },
    { param: "text.format", body: { text: { format: { type: "json_schema", name: "x", schema: {} } } } },
    { param: "tool_choice", body: { tool_choice: { type: "web_search_preview" } } },
    { param: "tool_choice", body: { tool_choice: { type: "allowed_tools", mode: "auto", tools: [] } } },
    {
      param: "input.0.content.1",
      body: {
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "what is this?" },
              { type: "input_image", image_url: "https://example.com/a.png", detail: "auto" },
            ],
          },
        ],
      },
    },
    {
      param: "input.0.output.0",
      body: {
        input: [
          {
            type: "function_call_output",
            call_id: "call_1",
            output: [{ type: "input_image", image_url: "https://example.com/a.png" }],
          },
        ],
      },
    },
  ])("$param ($body)", ({ param, body }) => {
    const outcome = responsesToChatRequest(parse({ input: "hi", ...body }));
    expect(outcome).toMatchObject({ ok: false, param });
  });

  it("takes a text format of type text and truncation disabled", () => {
    const outcome = responsesToChatRequest(
      parse({ input: "hi", text: { format: { type: "text" } }, truncation: "disabled", include: [] }),
    );
    expect(outcome.ok).toBe(true);
  });

  it.each([
    { param: "tools.0.type", type: "web_search", body: { tools: [{ type: "web_search" }] } },
    {
      param: "tools.1.type",
      type: "file_search",
      body: {
        tools: [
          { type: "function", name: "f" },
          { type: "file_search", vector_store_ids: [] },
        ],
      },
    },
    { param: "tools.0.type", type: "computer_use_preview", body: { tools: [{ type: "computer_use_preview" }] } },
    { param: "input.0.type", type: "reasoning", body: { input: [{ type: "reasoning", id: "rs_1", summary: [] }] } },
    { param: "input.0.type", type: "item_reference", body: { input: [{ type: "item_reference", id: "msg_1" }] } },
    {
      param: "input.0.content.0.type",
      type: "input_file",
      body: { input: [{ role: "user", content: [{ type: "input_file", file_id: "file_1" }] }] },
    },
  ])("the schema refuses $type at $param, naming the type", ({ param, type, body }) => {
    const result = ResponsesRequest.safeParse({ model: MODEL, input: "hi", ...body });
    const issue = result.error?.issues[0];
    expect([issue?.path.join("."), issue?.message.includes(`'${type}'`)]).toEqual([param, true]);
  });
});

describe("the door's chat completion as a response", () => {
  it("makes its text a message item with one output_text part", () => {
    const response = chatCompletionToResponse(completion("Hello."), meta());
    expect(response.output).toEqual([
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Hello.", annotations: [], logprobs: [] }],
      },
    ]);
  });

  it("makes each tool call a function_call item whose call_id is the tool call's id", () => {
    const response = chatCompletionToResponse(
      completion(null, [call("call_a", "read", '{"path":"a"}'), call("call_b", "list", "{}")]),
      meta(),
    );
    expect(response.output).toEqual([
      {
        type: "function_call",
        id: "fc_1",
        call_id: "call_a",
        name: "read",
        arguments: '{"path":"a"}',
        status: "completed",
      },
      { type: "function_call", id: "fc_2", call_id: "call_b", name: "list", arguments: "{}", status: "completed" },
    ]);
  });

  it.each([
    { finish: "stop", status: "completed", details: null },
    { finish: "tool_calls", status: "completed", details: null },
    { finish: "length", status: "incomplete", details: { reason: "max_output_tokens" } },
    { finish: "content_filter", status: "incomplete", details: { reason: "content_filter" } },
  ])("finish_reason $finish is status $status", ({ finish, status, details }) => {
    const response = chatCompletionToResponse(completion("x", [], finish), meta());
    expect([response.status, response.incomplete_details]).toEqual([status, details]);
  });

  it("names the usage as the Responses API does, with the cached and reasoning tokens", () => {
    const answer = completion("x");
    answer.usage = {
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      prompt_tokens_details: { cached_tokens: 64 },
      completion_tokens_details: { reasoning_tokens: 8 },
    };
    expect(chatCompletionToResponse(answer, meta()).usage).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 64 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 8 },
      total_tokens: 140,
    });
  });

  it("repeats what the request asked for (instructions, previous response, tools)", () => {
    const tools = [{ type: "function", name: "read" }];
    const response = chatCompletionToResponse(
      completion("x"),
      meta({ instructions: "Be terse.", previous_response_id: "resp_0", tools, tool_choice: "required" }),
    );
    expect(response).toMatchObject({
      id: "resp_1",
      object: "response",
      created_at: 1_700_000_000,
      model: MODEL,
      instructions: "Be terse.",
      previous_response_id: "resp_0",
      tools,
      tool_choice: "required",
      error: null,
    });
  });

  it("carries no output_text: the SDK computes it", () => {
    expect("output_text" in chatCompletionToResponse(completion("x"), meta())).toBe(false);
  });

  it("makes the door's error a failed response with its code and message", () => {
    const response = failedResponse(errorBody("agent_model_failed", "The mode's model failed."), meta());
    expect([response.status, response.error, response.output]).toEqual([
      "failed",
      { code: "agent_model_failed", message: "The mode's model failed." },
      [],
    ]);
  });
});

describe("the door's chunks as the Responses stream", () => {
  it("streams a text answer as one message item, numbered from 0", () => {
    const events = mapStream(TEXT_CHUNKS);
    expect(events.map((e) => [e.sequence_number, e.type])).toEqual([
      [0, "response.created"],
      [1, "response.in_progress"],
      [2, "response.output_item.added"],
      [3, "response.content_part.added"],
      [4, "response.output_text.delta"],
      [5, "response.output_text.delta"],
      [6, "response.output_text.done"],
      [7, "response.content_part.done"],
      [8, "response.output_item.done"],
      [9, "response.completed"],
    ]);
  });

  it("ends a text answer with the whole response and its usage", () => {
    const last = mapStream(TEXT_CHUNKS).at(-1);
    expect(last?.type === "response.completed" && last.response).toMatchObject({
      status: "completed",
      output: [{ type: "message", status: "completed", content: [{ type: "output_text", text: "Hello, world" }] }],
      usage: { input_tokens: 12, output_tokens: 5, total_tokens: 17 },
    });
  });

  it("streams two tool calls with fragmented arguments as two function_call items", () => {
    const events = mapStream(TWO_CALLS_CHUNKS);
    const calls = events.flatMap((e) =>
      e.type === "response.function_call_arguments.done" ? [[e.output_index, e.name, e.arguments]] : [],
    );
    expect(calls).toEqual([
      [0, "read", '{"path":"a.txt"}'],
      [1, "list", '{"dir":"."}'],
    ]);
  });

  it("sends each call's argument fragments as deltas of its own item", () => {
    const events = mapStream(TWO_CALLS_CHUNKS);
    const deltas = events.flatMap((e) =>
      e.type === "response.function_call_arguments.delta" ? [[e.item_id, e.delta]] : [],
    );
    expect(deltas).toEqual([
      ["fc_1", '{"pa'],
      ["fc_1", 'th":"a.txt"}'],
      ["fc_2", '{"di'],
      ["fc_2", 'r":"."}'],
    ]);
  });

  it("ends a cut answer with response.incomplete and its reason", () => {
    const last = mapStream([chunk({ content: "Hel" }), chunk({}, "length"), usageChunk()]).at(-1);
    expect(last?.type === "response.incomplete" && [last.response.status, last.response.incomplete_details]).toEqual([
      "incomplete",
      { reason: "max_output_tokens" },
    ]);
  });

  it("ends with response.failed when the door's stream carries an error", () => {
    const mapper = new ResponsesStreamMapper(meta());
    mapper.start();
    mapper.push(chunk({ content: "Hel" }));
    const failed = mapper.push(errorBody("agent_turn_failed", "The turn failed."));
    expect(
      failed.map(
        (e) => e.type === "response.failed" && [e.response.status, e.response.error, e.response.output[0]?.status],
      ),
    ).toEqual([["failed", { code: "agent_turn_failed", message: "The turn failed." }, "incomplete"]]);
  });

  it("sends nothing after the stream ended", () => {
    const mapper = new ResponsesStreamMapper(meta());
    mapper.start();
    mapper.end();
    expect([...mapper.push(chunk({ content: "late" })), ...mapper.end()]).toEqual([]);
  });
});

describe("the official openai SDK reading the mapped answers", () => {
  it("parses a mapped response from responses.create, computing output_text", async () => {
    const body = chatCompletionToResponse(completion("Hello from the agent."), meta());
    const client = sdkClient(() => Response.json(body));
    const response = await client.responses.create({ model: MODEL, input: "hi" });
    expect([response.id, response.status, response.output_text, response.usage?.total_tokens]).toEqual([
      "resp_1",
      "completed",
      "Hello from the agent.",
      17,
    ]);
  });

  it("reads mapped function calls from responses.create", async () => {
    const body = chatCompletionToResponse(completion(null, [call("call_a", "read", '{"path":"a"}')]), meta());
    const client = sdkClient(() => Response.json(body));
    const response = await client.responses.create({ model: MODEL, input: "read a" });
    expect(
      response.output.map((item) => item.type === "function_call" && [item.call_id, item.name, item.arguments]),
    ).toEqual([["call_a", "read", '{"path":"a"}']]);
  });

  it("accepts the mapped text stream in responses.stream, its final response and text", async () => {
    const client = sdkClient(() => sseResponse(mapStream(TEXT_CHUNKS)));
    const stream = client.responses.stream({ model: MODEL, input: "hi" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect([deltas, final.status, final.output_text, final.usage?.output_tokens]).toEqual([
      ["Hello", ", world"],
      "completed",
      "Hello, world",
      5,
    ]);
  });

  it("accepts text then a tool call in one mapped stream, as two output items", async () => {
    const chunks = [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Let me look." }),
      chunk({
        tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "{}" } }],
      }),
      chunk({}, "tool_calls"),
      usageChunk(),
    ];
    const client = sdkClient(() => sseResponse(mapStream(chunks)));
    const final = await client.responses.stream({ model: MODEL, input: "look" }).finalResponse();
    expect([final.output.map((item) => item.type), final.output_text]).toEqual([
      ["message", "function_call"],
      "Let me look.",
    ]);
  });

  it("resolves the SDK's final response as failed, with the text so far, when the door's stream breaks", async () => {
    const mapper = new ResponsesStreamMapper(meta());
    const events = [
      ...mapper.start(),
      ...mapper.push(chunk({ content: "Hel" })),
      ...mapper.push(errorBody("agent_model_failed", "The mode's model failed.")),
    ];
    const client = sdkClient(() => sseResponse(events));
    const final = await client.responses.stream({ model: MODEL, input: "hi" }).finalResponse();
    expect([final.status, final.error?.code, final.error?.message, final.output_text]).toEqual([
      "failed",
      "agent_model_failed",
      "The mode's model failed.",
      "Hel",
    ]);
  });

  it("accepts the mapped stream of two tool calls in responses.stream", async () => {
    const client = sdkClient(() => sseResponse(mapStream(TWO_CALLS_CHUNKS)));
    const final = await client.responses.stream({ model: MODEL, input: "look" }).finalResponse();
    expect(
      final.output.map((item) => item.type === "function_call" && [item.call_id, item.name, item.arguments]),
    ).toEqual([
      ["call_a", "read", '{"path":"a.txt"}'],
      ["call_b", "list", '{"dir":"."}'],
    ]);
  });
});

// The agent on OpenAI's Responses API (/agent/v1/responses), driven by the official `openai` client: a plain and a
// streamed answer, a client tool round trip by previous_response_id and by the whole input resent, responses kept,
// read, deleted and confined to their org, and what the door refuses.
import { env, exports } from "cloudflare:workers";
import { Agent, tool as agentTool, run, setDefaultOpenAIClient, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { refuseD1Batches } from "../fixtures/d1-spy";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";
import { openAIContextLengthExceeded } from "../upstream/script-types";

const BASE_URL = "http://aptix.test/agent/v1";

/** The client, the X-Aptix-Session header of every answer it got and the path of every request, in order. */
function client(key: string = TEST_KEYS.chat.key): { openai: OpenAI; sessions: string[]; paths: string[] } {
  const sessions: string[] = [];
  const paths: string[] = [];
  const openai = new OpenAI({
    apiKey: key,
    baseURL: BASE_URL,
    maxRetries: 0,
    fetch: async (input, init) => {
      paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      const response = await exports.default.fetch(input, init);
      const session = response.headers.get("x-aptix-session");
      if (session) sessions.push(session);
      return response;
    },
  });
  return { openai, sessions, paths };
}

const weather: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  strict: false,
};

/** The scripted model asks for the weather in Paris, then answers with what the tool said. */
function weatherScript() {
  return scriptUpstream([
    { type: "completion", toolCalls: [{ id: "call_paris", name: "get_weather", arguments: '{"city": "Paris"}' }] },
    { type: "completion", content: "It is sunny in Paris." },
  ]);
}

/** The client's output for the scripted call, continuing from the response that handed it the call. */
function answerCall(openai: OpenAI, previousResponseId: string, output: string) {
  return openai.responses.create({
    model: "aptix-agent/general",
    previous_response_id: previousResponseId,
    input: [{ type: "function_call_output", call_id: "call_paris", output }],
    tools: [weather],
  });
}

async function sessionCount(): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM session_index").first<{ n: number }>();
  return row?.n ?? 0;
}

function raw(method: string, path: string, key: string = TEST_KEYS.chat.key, body?: unknown): Promise<Response> {
  return exports.default.fetch(`http://aptix.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

describe("/agent/v1/responses with the openai client", () => {
  it("answers a message as a completed response with its text, usage and session", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello from the agent." }]);
    const { openai, sessions } = client();
    const response = await openai.responses.create({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    expect(response.object).toBe("response");
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Hello from the agent.");
    expect(response.output).toEqual([expect.objectContaining({ type: "message", role: "assistant" })]);
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    expect(sessions[0]).toMatch(/^[0-9a-f]{64}$/);
  });

  it("streams the answer as the Responses events the SDK's stream helper reads", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Streamed from the agent.", chunkSize: 4 }]);
    const { openai } = client();
    const stream = openai.responses.stream({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    const types: string[] = [];
    const numbers: number[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      numbers.push(event.sequence_number);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe("Streamed from the agent.");
    expect(final.output_text).toBe("Streamed from the agent.");
    expect(final.status).toBe("completed");
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toContain("response.output_item.added");
    expect(numbers).toEqual(numbers.map((_, i) => i));
  });

  it("hands the client its function call, and continues the session by previous_response_id with its output", async () => {
    const script = await weatherScript();
    const { openai, sessions } = client();
    const first = await openai.responses.create({
      model: "aptix-agent/general",
      input: `weather in Paris? ${script.marker}`,
      tools: [weather],
    });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", call_id: "call_paris", name: "get_weather" });
    expect(JSON.parse(call?.type === "function_call" ? call.arguments : "null")).toEqual({ city: "Paris" });
    const second = await answerCall(openai, first.id, '{"sky":"sunny"}');
    expect(second.output_text).toBe("It is sunny in Paris.");
    expect(second.previous_response_id).toBe(first.id);
    expect(sessions).toHaveLength(2);
    expect(sessions[1]).toBe(sessions[0]);
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toBe('{"sky":"sunny"}');
  });

  it("streams a function call's arguments and continues after its output", async () => {
    const script = await weatherScript();
    const { openai, sessions } = client();
    const stream = openai.responses.stream({
      model: "aptix-agent/general",
      input: `weather in Paris? ${script.marker}`,
      tools: [weather],
    });
    let args = "";
    for await (const event of stream) if (event.type === "response.function_call_arguments.delta") args += event.delta;
    const first = await stream.finalResponse();
    expect(JSON.parse(args)).toEqual({ city: "Paris" });
    const second = await answerCall(openai, first.id, "sunny");
    expect(second.output_text).toBe("It is sunny in Paris.");
    expect(sessions[1]).toBe(sessions[0]);
  });

  it("continues by previous_response_id from a response kept while the session's own write of its head failed", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "First." },
      { type: "completion", content: "Second." },
    ]);
    const { openai, sessions } = client();
    const { result: first, refused } = await refuseD1Batches(
      (sql) => sql.some((s) => s.startsWith("UPDATE session_index")) && sql.some((s) => s.includes("agent_threads")),
      () => openai.responses.create({ model: "aptix-agent/general", input: `one ${script.marker}` }),
    );
    expect(refused.length).toBeGreaterThan(0);
    const second = await openai.responses.create({
      model: "aptix-agent/general",
      input: "two",
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe("Second.");
    expect(sessions[1]).toBe(sessions[0]);
  });

  it("continues the same session when the whole input is resent without previous_response_id", async () => {
    const script = await weatherScript();
    const { openai, sessions } = client();
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: "user", content: `weather in Paris? ${script.marker}` },
    ];
    const first = await openai.responses.create({
      model: "aptix-agent/general",
      instructions: "Answer weather questions.",
      input,
      tools: [weather],
    });
    const second = await openai.responses.create({
      model: "aptix-agent/general",
      instructions: "Answer weather questions.",
      input: [
        ...input,
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: "call_paris", output: "sunny" },
      ],
      tools: [weather],
    });
    expect(second.output_text).toBe("It is sunny in Paris.");
    expect(sessions[1]).toBe(sessions[0]);
  });

  it("takes a function call's output over 1 MiB, as tool results with whole files make them", async () => {
    const script = await weatherScript();
    const { openai } = client();
    const first = await openai.responses.create({
      model: "aptix-agent/general",
      input: `weather in Paris? ${script.marker}`,
      tools: [weather],
    });
    const second = await answerCall(openai, first.id, "x".repeat(1_500_000));
    expect(second.output_text).toBe("It is sunny in Paris.");
  });

  it("asks for approval in words and runs the call when the next input, by previous_response_id, says yes", async () => {
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
      { type: "completion", content: "Done with the greeting." },
    ]);
    const { openai } = client();
    const asked = await openai.responses.create({ model: `aptix-agent/${mode}`, input: `greet Dana ${script.marker}` });
    expect(asked.status).toBe("completed");
    expect(asked.output_text).toMatch(
      /^I need your approval for this tool call:\n1\. agent_hello_world with \{"name":"Dana"\}/,
    );
    const done = await openai.responses.create({
      model: `aptix-agent/${mode}`,
      previous_response_id: asked.id,
      input: "yes",
    });
    expect(done.output_text).toBe("Done with the greeting.");
    const toolMessage = (await script.messagesOf(1)).find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("Hello, Dana");
  });

  it("reads a kept response back by its id", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Kept." }]);
    const { openai } = client();
    const created = await openai.responses.create({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    const read = await openai.responses.retrieve(created.id);
    expect(read.id).toBe(created.id);
    expect(read.output_text).toBe("Kept.");
    expect(read.status).toBe("completed");
  });

  it("keeps a streamed response, read back as the stream's final response", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Streamed and kept." }]);
    const { openai } = client();
    const stream = openai.responses.stream({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    const final = await stream.finalResponse();
    const read = await openai.responses.retrieve(final.id);
    expect(read.output_text).toBe("Streamed and kept.");
  });

  it("hides a deleted response: read and previous_response_id no longer find it", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Soon gone." }]);
    const { openai } = client();
    const created = await openai.responses.create({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    const deleted = await raw("DELETE", `/agent/v1/responses/${created.id}`);
    expect(await deleted.json()).toEqual({ id: created.id, object: "response", deleted: true });
    const read = await raw("GET", `/agent/v1/responses/${created.id}`);
    expect(read.status).toBe(404);
    expect(((await read.json()) as { error: { code: string } }).error.code).toBe("response_not_found");
    const next = await raw("POST", "/agent/v1/responses", TEST_KEYS.chat.key, {
      model: "aptix-agent/general",
      previous_response_id: created.id,
      input: "and then?",
    });
    expect(next.status).toBe(404);
    expect(((await next.json()) as { error: { param: string } }).error.param).toBe("previous_response_id");
  });

  it("does not keep a response asked with store: false", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Not kept." }]);
    const { openai } = client();
    const created = await openai.responses.create({
      model: "aptix-agent/general",
      input: `hi ${script.marker}`,
      store: false,
    });
    expect(created.output_text).toBe("Not kept.");
    expect((await raw("GET", `/agent/v1/responses/${created.id}`)).status).toBe(404);
  });

  it("answers another org's response id with 404, read or continued", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Mine." }]);
    const { openai } = client();
    const created = await openai.responses.create({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    expect((await raw("GET", `/agent/v1/responses/${created.id}`, TEST_KEYS.otherOrg.key)).status).toBe(404);
    expect((await raw("DELETE", `/agent/v1/responses/${created.id}`, TEST_KEYS.otherOrg.key)).status).toBe(404);
    const before = await sessionCount();
    const next = await raw("POST", "/agent/v1/responses", TEST_KEYS.otherOrg.key, {
      model: "aptix-agent/general",
      previous_response_id: created.id,
      input: "continue",
    });
    expect(next.status).toBe(404);
    expect(await sessionCount()).toBe(before);
    expect((await raw("GET", `/agent/v1/responses/${created.id}`)).status).toBe(200);
  });

  it("refuses to continue from a response that is no longer its session's latest", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "One." },
      { type: "completion", content: "Two." },
    ]);
    const { openai } = client();
    const first = await openai.responses.create({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    await openai.responses.create({ model: "aptix-agent/general", previous_response_id: first.id, input: "again" });
    const fork = await raw("POST", "/agent/v1/responses", TEST_KEYS.chat.key, {
      model: "aptix-agent/general",
      previous_response_id: first.id,
      input: "a fork",
    });
    expect(fork.status).toBe(400);
    const error = ((await fork.json()) as { error: { param: string; message: string } }).error;
    expect(error.param).toBe("previous_response_id");
    expect(error.message).toContain("not the latest response");
  });

  it("removes a session's responses when the session is deleted", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Deleted with it." }]);
    const { openai, sessions } = client();
    const created = await openai.responses.create({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    expect((await raw("DELETE", `/context/sessions/${sessions[0]}`)).status).toBe(200);
    expect((await raw("GET", `/agent/v1/responses/${created.id}`)).status).toBe(404);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM agent_responses WHERE id = ?")
      .bind(created.id)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });

  it("ends a stream whose turn failed with response.failed, kept as failed", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 400, body: openAIContextLengthExceeded(8192, 9100) },
    ]);
    const { openai } = client();
    const stream = openai.responses.stream({ model: "aptix-agent/general", input: `hi ${script.marker}` });
    const types: string[] = [];
    let failed: OpenAI.Responses.Response | null = null;
    try {
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.failed") failed = event.response;
      }
    } catch {
      // The SDK's stream helper throws on response.failed after yielding it.
    }
    expect(types.at(-1)).toBe("response.failed");
    expect(failed?.status).toBe("failed");
    expect(failed?.error?.code).toBe("context_length_exceeded");
    const read = (await (await raw("GET", `/agent/v1/responses/${failed?.id}`)).json()) as { status: string };
    expect(read.status).toBe("failed");
  });
});

describe("/agent/v1/responses with the OpenAI Agents SDK's default model (Responses)", () => {
  // No traces sent to OpenAI from a test.
  setTracingDisabled(true);

  it("runs an agent with a function tool over several turns in one session", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ id: "call_paris", name: "get_weather", arguments: '{"city": "Paris"}' }] },
      { type: "completion", content: "It is sunny in Paris." },
      { type: "completion", content: "Yes, take sunglasses." },
    ]);
    const { openai, sessions, paths } = client();
    setDefaultOpenAIClient(openai);
    const cities: string[] = [];
    const agent = new Agent({
      name: "Weather",
      instructions: "Answer weather questions.",
      model: "aptix-agent/general",
      tools: [
        agentTool({
          name: "get_weather",
          description: "The weather in a city.",
          parameters: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            cities.push(city);
            return `sunny in ${city}`;
          },
        }),
      ],
    });
    const first = await run(agent, `weather in Paris? ${script.marker}`);
    expect(first.finalOutput).toBe("It is sunny in Paris.");
    expect(cities).toEqual(["Paris"]);
    const second = await run(agent, [...first.history, { role: "user", content: "Sunglasses?" }]);
    expect(second.finalOutput).toBe("Yes, take sunglasses.");
    expect(paths).toEqual(Array(3).fill("/agent/v1/responses"));
    expect(sessions).toHaveLength(3);
    expect(new Set(sessions).size).toBe(1);
    const lastCall = await script.messagesOf(2);
    expect(lastCall.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      `weather in Paris? ${script.marker}`,
      "Sunglasses?",
    ]);
  });

  it("continues a conversation by the run's last response id", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "Hello." },
      { type: "completion", content: "Still here." },
    ]);
    const { openai, sessions } = client();
    setDefaultOpenAIClient(openai);
    const agent = new Agent({ name: "Greeter", instructions: "Greet.", model: "aptix-agent/general" });
    const first = await run(agent, `hi ${script.marker}`);
    const second = await run(agent, "are you there?", { previousResponseId: first.lastResponseId });
    expect(second.finalOutput).toBe("Still here.");
    expect(sessions[1]).toBe(sessions[0]);
  });
});

describe("/agent/v1/responses refusals", () => {
  it("refuses a hosted tool, naming it, and starts no session", async () => {
    const before = await sessionCount();
    const answer = await raw("POST", "/agent/v1/responses", TEST_KEYS.chat.key, {
      model: "aptix-agent/general",
      input: "search the web",
      tools: [{ type: "web_search" }],
    });
    expect(answer.status).toBe(400);
    const error = ((await answer.json()) as { error: { param: string; message: string } }).error;
    expect(error.param).toBe("tools.0.type");
    expect(error.message).toContain("'web_search'");
    expect(await sessionCount()).toBe(before);
  });

  it("refuses an image part, naming it", async () => {
    const answer = await raw("POST", "/agent/v1/responses", TEST_KEYS.chat.key, {
      model: "aptix-agent/general",
      input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png" }] }],
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { param: string } }).error.param).toBe("input.0.content.0");
  });

  it("answers a mode that does not exist with model_not_found", async () => {
    const answer = await raw("POST", "/agent/v1/responses", TEST_KEYS.chat.key, {
      model: "aptix-agent/nowhere",
      input: "hi",
    });
    expect(answer.status).toBe(404);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
  });
});

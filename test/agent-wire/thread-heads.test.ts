// The head a session records after a streamed answer (read by the object from the frames the stream carries) is the
// history the client sends back: each streamed answer's history, resent with the next input, continues the session;
// and a streamed answer is its own turn's alone, though the session takes another turn while its head is written.
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { agentClient, startConversation } from "../fixtures/agent-client";
import { holdD1Batch } from "../fixtures/d1-spy";
import { sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const weather: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

/** A streamed answer read as the client reads it: its message (text and tool calls) and its session. */
async function streamed(model: string, messages: Message[], tools?: OpenAI.Chat.Completions.ChatCompletionTool[]) {
  const { data: stream, response } = await agentClient()
    .chat.completions.create({ model, stream: true, messages, ...(tools ? { tools } : {}) })
    .withResponse();
  let content = "";
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? "";
    for (const call of delta?.tool_calls ?? []) {
      calls.push({
        id: call.id ?? "",
        type: "function",
        function: { name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" },
      });
    }
  }
  const message: Message =
    calls.length > 0 ? { role: "assistant", content, tool_calls: calls } : { role: "assistant", content };
  return { message, sessionId: response.headers.get("x-aptix-session") };
}

describe("the head recorded after a streamed answer", () => {
  it("matches the history with the client's tool call, resent with its result", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "get_weather", arguments: '{"city": "Paris"}' }] },
      { type: "completion", content: "It is sunny in Paris." },
    ]);
    const messages: Message[] = [{ role: "user", content: `weather in Paris? ${script.marker}` }];
    const first = await streamed("aptix-agent/general", messages, [weather]);
    const callId = first.message.role === "assistant" ? (first.message.tool_calls?.[0]?.id ?? "") : "";
    messages.push(first.message, { role: "tool", tool_call_id: callId, content: "sunny" });
    const second = await agentClient()
      .chat.completions.create({ model: "aptix-agent/general", messages })
      .withResponse();
    expect(second.data.choices[0]?.message.content).toBe("It is sunny in Paris.");
    expect(second.response.headers.get("x-aptix-session")).toBe(first.sessionId);
  });

  it("matches the history whose answer ran a tool of the session between two texts", async () => {
    const mode = await mcpMode(["agent_hello_world"]);
    const script = await scriptUpstream([
      { type: "completion", content: "Let me greet.", toolCalls: [{ name: "agent_hello_world", arguments: "{}" }] },
      { type: "completion", content: "Greeted." },
      { type: "completion", content: "Again." },
    ]);
    const messages: Message[] = [{ role: "user", content: `greet ${script.marker}` }];
    const first = await streamed(`aptix-agent/${mode}`, messages);
    expect(first.message.content).toBe("Let me greet.\n\nGreeted.");
    messages.push(first.message, { role: "user", content: "again" });
    const second = await agentClient()
      .chat.completions.create({ model: `aptix-agent/${mode}`, messages })
      .withResponse();
    expect(second.data.choices[0]?.message.content).toBe("Again.");
    expect(second.response.headers.get("x-aptix-session")).toBe(first.sessionId);
  });

  it("matches the history whose answer asks for approval in words, resent with the user's yes", async () => {
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"Dana"}' }] },
      { type: "completion", content: "Done with the greeting." },
    ]);
    const messages: Message[] = [{ role: "user", content: `greet Dana ${script.marker}` }];
    const asked = await streamed(`aptix-agent/${mode}`, messages);
    expect(asked.message.content).toContain("I need your approval for this tool call:");
    messages.push(asked.message, { role: "user", content: "yes" });
    const done = await agentClient()
      .chat.completions.create({ model: `aptix-agent/${mode}`, messages })
      .withResponse();
    expect(done.data.choices[0]?.message.content).toBe("Done with the greeting.");
    expect(done.response.headers.get("x-aptix-session")).toBe(asked.sessionId);
  });

  it("carries no text of a turn the session starts while the answer's head is being written", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "One." },
      { type: "completion", content: "Door answer." },
      { type: "completion", content: "Another turn's text." },
    ]);
    const { sessionId } = await startConversation(`one ${script.marker}`);
    const said = await holdD1Batch(
      (sql) => sql.some((statement) => statement.includes("agent_threads")),
      async ({ reached, release }) => {
        const stream = await agentClient().chat.completions.create(
          { model: "aptix-agent/general", stream: true, messages: [{ role: "user", content: `two ${script.marker}` }] },
          { headers: { "X-Aptix-Session": sessionId } },
        );
        const reading = (async () => {
          let text = "";
          for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
          return text;
        })();
        await reached;
        // The door's turn is over, its head not yet written: the owner's next message runs a turn meanwhile.
        const other = await sendMessage(sessionId, `three ${script.marker}`);
        release();
        return { door: await reading, other: other.text };
      },
    );
    expect(said).toEqual({ door: "Door answer.", other: "Another turn's text." });
  });
});

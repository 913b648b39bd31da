// A turn through HTTP with the native tool-call format: server loops, unknown tools, limits, branches.
import { describe, expect, it } from "vitest";
import { call, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { openAIContextLengthExceeded } from "../upstream/script-types";

type SentBody = {
  messages: { role: string; content: string | null; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
};

const hello = (name: string) => ({ name: "agent_hello_world", arguments: JSON.stringify({ name }) });

describe("the agent loop (native tool calls)", () => {
  it("runs a multi-step server loop and returns the final answer with every call", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [hello("Dana")] },
      { type: "completion", toolCalls: [{ name: "agent_list_modes", arguments: "{}" }] },
      { type: "completion", content: "Greeted Dana and listed the modes." },
    ]);
    const id = await createSession();
    const response = await sendMessage(id, `Say hello to Dana, then list the modes ${script.marker}`);

    expect(response).toMatchObject({
      sessionId: id,
      status: "completed",
      mode: "general",
      text: "Greeted Dana and listed the modes.",
      iterations: 3,
    });
    expect(response.toolCalls.map((c) => [c.name, c.wasExecuted, c.requiresClientExecution])).toEqual([
      ["agent_hello_world", true, false],
      ["agent_list_modes", true, false],
    ]);
    expect(JSON.parse(response.toolCalls[0]?.resultJson ?? "")).toMatchObject({
      message: "Hello, Dana! Welcome to Aptix.",
      sessionId: id,
    });
    const sent = (await script.bodies()) as SentBody[];
    const toolMessage = sent[1]?.messages.at(-1);
    expect(toolMessage?.role).toBe("tool");
    expect(JSON.parse(toolMessage?.content ?? "")).toMatchObject({ message: "Hello, Dana! Welcome to Aptix." });
  });

  it("sends the enhanced system prompt and the mode's tools with every request", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hi." }]);
    await sendMessage(await createSession("workspace"), `hi ${script.marker}`);
    const [sent] = (await script.bodies()) as SentBody[];
    expect(sent?.messages[0]?.role).toBe("system");
    expect(sent?.messages[0]?.content).toContain("## Mode: Workspace (workspace)");
    expect(sent?.tools?.map((t) => t.function.name)).toEqual([
      "agent_change_mode",
      "agent_list_modes",
      "workspace_read_file",
      "workspace_write_file",
    ]);
  });

  it("offers agent_change_mode and agent_list_modes in every mode", async () => {
    for (const mode of ["general", "ddr_authoring", "workspace"]) {
      const script = await scriptUpstream([{ type: "completion", content: "ok" }]);
      await sendMessage(await createSession(mode), `hi ${script.marker}`);
      const [sent] = (await script.bodies()) as SentBody[];
      expect(sent?.tools?.map((t) => t.function.name)).toEqual(
        expect.arrayContaining(["agent_change_mode", "agent_list_modes"]),
      );
    }
  });

  it("tells the model about an unknown tool as that call's result, and goes on", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "delete_everything", arguments: "{}" }] },
      { type: "completion", content: "That tool does not exist; sorry." },
    ]);
    const response = await sendMessage(await createSession(), `go ${script.marker}`);
    expect(response.status).toBe("completed");
    expect(response.toolCalls[0]).toMatchObject({ name: "delete_everything", wasExecuted: false });
    expect(response.toolCalls[0]?.errorMessage).toMatch(/^Unknown tool 'delete_everything'\. Available tools: /);
    const sent = (await script.bodies()) as SentBody[];
    expect(JSON.parse(sent[1]?.messages.at(-1)?.content ?? "")).toEqual({ error: response.toolCalls[0]?.errorMessage });
  });

  it("sends arguments the tool rejects back to the model as the call's error", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "agent_hello_world", arguments: '{"name":""}' }] },
      { type: "completion", content: "I need a name." },
    ]);
    const response = await sendMessage(await createSession(), `greet ${script.marker}`);
    expect(response.toolCalls[0]?.errorMessage).toBe("HelloWorldTool requires a non-empty 'name' string.");
    expect(response.text).toBe("I need a name.");
  });

  it("stops at the iteration limit with a failed turn that says which limit", async () => {
    const script = await scriptUpstream(
      Array.from({ length: 10 }, (_, i) => ({ type: "completion" as const, toolCalls: [hello(`N${i}`)] })),
    );
    const id = await createSession();
    const response = await sendMessage(id, `loop forever ${script.marker}`);
    expect(response.status).toBe("failed");
    expect(response.iterations).toBe(10);
    expect(response.error).toEqual({
      code: "iteration_limit",
      message: "The turn stopped at the iteration limit: 10 model calls without a final answer (the limit is 10).",
    });
    expect((await getSession(id)).status).toBe("idle");
  });

  it("surfaces an upstream refusal as a failed turn with a fixed text for its cause", async () => {
    const script = await scriptUpstream([
      { type: "error", status: 400, body: openAIContextLengthExceeded(8192, 9000) },
    ]);
    const response = await sendMessage(await createSession(), `hi ${script.marker}`);
    expect(response.status).toBe("failed");
    expect(response.error).toEqual({
      code: "context_length_exceeded",
      message: "The conversation is too long for the model's context; start a new session, or shorten the message.",
    });
  });

  it("changes the mode with branch:true, then starts a linked session in that mode", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [
          {
            name: "agent_change_mode",
            arguments: JSON.stringify({ mode: "ddr_authoring", branch: true, reason: "The user wants a DDR." }),
          },
        ],
      },
      { type: "completion", content: "Switched; the DDR work continues in a new session." },
    ]);
    const id = await createSession();
    const response = await sendMessage(id, `option 3 please ${script.marker}`);

    expect(response.status).toBe("completed");
    expect(response.mode).toBe("ddr_authoring");
    expect(response.branchSessionId).toMatch(/^[0-9a-f]{64}$/);
    const parent = await getSession(id);
    expect(parent.modeHistory).toMatchObject([
      { from: "general", to: "ddr_authoring", reason: "The user wants a DDR.", userId: "bob" },
    ]);
    const branch = await getSession(response.branchSessionId ?? "");
    expect(branch).toMatchObject({ mode: "ddr_authoring", parentSessionId: id, status: "idle" });
    const sent = (await script.bodies()) as SentBody[];
    expect(sent[1]?.messages.at(-1)?.content).toContain(`A new session ${response.branchSessionId} was started`);
    expect(sent[1]?.messages[0]?.content).toContain("## Mode: DDR Authoring (ddr_authoring)");
  });

  it("reports an unknown mode from agent_change_mode with TUL-007's exact failure and changes nothing", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [
          { name: "agent_change_mode", arguments: JSON.stringify({ mode: "astrology", branch: false, reason: "r" }) },
        ],
      },
      { type: "completion", content: "That mode does not exist." },
    ]);
    const id = await createSession();
    const response = await sendMessage(id, `switch ${script.marker}`);
    expect(response.toolCalls[0]?.errorMessage).toBe("ModeChangeTool failed to change the session mode.");
    expect((await getSession(id)).modeHistory).toEqual([]);
  });

  it("runs one turn of two messages sent at the same moment, answering the other 409 session_busy", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "the one answer", delayFirstByteMs: 200 }]);
    const id = await createSession();
    const both = await Promise.all([
      call("POST", `/context/sessions/${id}/messages`, { content: `one ${script.marker}` }),
      call("POST", `/context/sessions/${id}/messages`, { content: `two ${script.marker}` }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(both.find((r) => r.status === 409)?.json).toMatchObject({ error: { code: "session_busy" } });
    const session = await getSession(id);
    expect(session.conversation.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(session.turns).toHaveLength(1);
  });

  it("answers 409 session_busy to a message sent while a turn runs, and loses nothing", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "slow answer", delayFirstByteMs: 600 }]);
    const id = await createSession();
    const first = sendMessage(id, `first ${script.marker}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const second = await call("POST", `/context/sessions/${id}/messages`, { content: "second" });
    expect(second.status).toBe(409);
    expect((second.json as ErrorBody).error.code).toBe("session_busy");
    expect((await first).text).toBe("slow answer");
    const contents = (await getSession(id)).conversation.map((m) => m.content);
    expect(contents).toEqual([`first ${script.marker}`, "slow answer"]);
  });
});

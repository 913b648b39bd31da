// The A2A server driven by the official @a2a-js/sdk client over both bindings, JSON-RPC and HTTP+JSON: the card,
// a blocking send, a stream, get, list, cancel, a task that needs approval (input-required, approved in words),
// and another org's task (not found).
import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";
import { a2aClient, BINDINGS, userMessage } from "./fixtures";

function taskOf(result: Awaited<ReturnType<Awaited<ReturnType<typeof a2aClient>>["sendMessage"]>>): Task {
  if ("messageId" in result) throw new Error("expected a task, got a message");
  return result;
}

function answerText(task: Task): string {
  const part = task.artifacts.find((a) => a.name === "answer")?.parts[0]?.content;
  return part?.$case === "text" ? part.value : "";
}

const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };

describe.each(BINDINGS)("A2A over %s with the official client", (binding) => {
  it("reads the card and picks the binding's interface", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const card = await client.getAgentCard();
    expect(card.name).toBe("aptix");
    expect(card.skills.map((s) => s.id)).toEqual(expect.arrayContaining(["general", "workspace"]));
    expect(client.transport.protocolName).toBe(binding);
  });

  it("answers a message with a completed task whose context is a new session", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Hello from the agent." }]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const task = taskOf(
      await client.sendMessage({
        tenant: "",
        message: userMessage(`hi ${script.marker}`),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toBe("Hello from the agent.");
    expect(task.contextId).toMatch(/^[0-9a-f]{64}$/);
  });

  it("streams a task: the task first, the answer as artifact updates, completed last", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Streamed answer." }]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream({
      tenant: "",
      message: userMessage(`hi ${script.marker}`),
      configuration: undefined,
      metadata: undefined,
    })) {
      events.push(event);
    }
    expect(events[0]?.payload?.$case).toBe("task");
    const text = events
      .flatMap((e) => (e.payload?.$case === "artifactUpdate" ? (e.payload.value.artifact?.parts ?? []) : []))
      .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
      .join("");
    expect(text).toBe("Streamed answer.");
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : null).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("gets a task by its id, and lists it", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Kept." }]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const sent = taskOf(
      await client.sendMessage({
        tenant: "",
        message: userMessage(`hi ${script.marker}`),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    const got = await client.getTask({ tenant: "", id: sent.id });
    expect(got).toMatchObject({ id: sent.id, contextId: sent.contextId });
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(got)).toBe("Kept.");
    const listed = await client.listTasks({
      tenant: "",
      contextId: sent.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([sent.id]);
  });

  it("asks for approval as input-required, in words, and runs the call when the next message says yes", async () => {
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [hello] },
      { type: "completion", content: "Done with the greeting." },
    ]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const asked = taskOf(
      await client.sendMessage({
        tenant: "",
        message: userMessage(`greet Dana ${script.marker}`),
        configuration: undefined,
        metadata: { skillId: mode },
      }),
    );
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const words = asked.status?.message?.parts[0]?.content;
    expect(words?.$case === "text" ? words.value : "").toContain("I need your approval for this tool call");
    const done = taskOf(
      await client.sendMessage({
        tenant: "",
        message: userMessage("yes", { taskId: asked.id, contextId: asked.contextId }),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect(done.id).toBe(asked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(done)).toBe("Done with the greeting.");
  });

  it("answers another org's task as not found", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Mine." }]);
    const mine = taskOf(
      await (await a2aClient(binding, TEST_KEYS.chat.key)).sendMessage({
        tenant: "",
        message: userMessage(`hi ${script.marker}`),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    const other = await a2aClient(binding, TEST_KEYS.otherOrg.key);
    await expect(other.getTask({ tenant: "", id: mine.id })).rejects.toMatchObject({ name: "TaskNotFoundError" });
  });
});

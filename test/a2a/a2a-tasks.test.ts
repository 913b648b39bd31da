// A2A tasks that outlive their request, with the official client over both bindings: a non-blocking send answers a
// working task at once; SubscribeToTask follows it; CancelTask stops it (running or waiting for approval), once; a
// task that needs approval streams to input-required; ListTasks lists the caller's tasks across contexts, and no one
// else's.
import { type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";
import { a2aClient, BINDINGS, type Binding, userMessage } from "./fixtures";

const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };

function asTask(result: Task | { messageId: string }): Task {
  if ("messageId" in result) throw new Error("expected a task, got a message");
  return result;
}

function send(text: string, metadata?: Record<string, unknown>) {
  return { tenant: "", message: userMessage(text), configuration: undefined, metadata };
}

/** A task waiting for approval of one call, in a mode that asks for it. */
async function taskAwaitingApproval(binding: Binding): Promise<Task> {
  const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
  const script = await scriptUpstream([{ type: "completion", toolCalls: [hello] }]);
  const client = await a2aClient(binding, TEST_KEYS.chat.key);
  return asTask(await client.sendMessage(send(`greet Dana ${script.marker}`, { skillId: mode })));
}

const stateOf = (event: StreamResponse | undefined) =>
  event?.payload?.$case === "statusUpdate"
    ? event.payload.value.status?.state
    : event?.payload?.$case === "task"
      ? event.payload.value.status?.state
      : undefined;

describe.each(BINDINGS)("A2A tasks over %s", (binding) => {
  it("answers a non-blocking send with a working task, which a follower sees cancelled when it is cancelled", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key, { polling: true });
    const task = asTask(await client.sendMessage(send(`think long ${script.marker}`)));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const follower = client.resubscribeTask({ tenant: "", id: task.id });
    const first = await follower.next();
    expect(stateOf(first.done ? undefined : first.value)).toBe(TaskState.TASK_STATE_WORKING);
    const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: StreamResponse[] = [];
    for await (const event of { [Symbol.asyncIterator]: () => follower }) rest.push(event);
    expect(stateOf(rest.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

// The same handler answers both bindings: each behaviour below runs over one of them, in turn (the wire of each
// method is covered over both above and in a2a-client.test.ts).
describe("A2A tasks, one binding each", () => {
  it("cancels a task waiting for approval, and refuses to cancel it again", async () => {
    const binding: Binding = "JSONRPC";
    const task = await taskAwaitingApproval(binding);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toMatchObject({
      name: "TaskNotCancelableError",
    });
  });

  it("answers another org's cancel as not found, and the task goes on waiting", async () => {
    const binding: Binding = "HTTP+JSON";
    const task = await taskAwaitingApproval(binding);
    const other = await a2aClient(binding, TEST_KEYS.otherOrg.key);
    await expect(other.cancelTask({ tenant: "", id: task.id, metadata: undefined })).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
    const mine = await a2aClient(binding, TEST_KEYS.chat.key);
    expect((await mine.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it("streams a task that needs approval to input-required, asking in words", async () => {
    const binding: Binding = "JSONRPC";
    const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
    const script = await scriptUpstream([{ type: "completion", toolCalls: [hello] }]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(send(`greet Dana ${script.marker}`, { skillId: mode }))) {
      events.push(event);
    }
    const last = events.at(-1)?.payload;
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const words = last?.$case === "statusUpdate" ? last.value.status?.message?.parts[0]?.content : undefined;
    expect(words?.$case === "text" ? words.value : "").toContain('Reply "yes" to approve');
  });

  it("hands a client-executed call over as input-required data, and goes on with the results a message carries", async () => {
    const binding: Binding = "HTTP+JSON";
    const read = { name: "workspace_read_file", arguments: JSON.stringify({ path: "src/index.ts" }) };
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [read] },
      { type: "completion", content: "It exports the app." },
    ]);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const asked = asTask(
      await client.sendMessage(send(`explain src/index.ts ${script.marker}`, { skillId: "workspace" })),
    );
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const data = asked.status?.message?.parts.find((p) => p.content?.$case === "data")?.content;
    const calls = (data?.$case === "data" ? data.value : {}) as { clientToolCalls?: { id: string; name: string }[] };
    expect(calls.clientToolCalls?.map((c) => c.name)).toEqual(["workspace_read_file"]);
    const results = [
      {
        toolCallId: calls.clientToolCalls?.[0]?.id ?? "",
        resultJson: JSON.stringify({ path: "src/index.ts", content: "export default app;" }),
      },
    ];
    const message = {
      ...userMessage("", { taskId: asked.id }),
      parts: [
        { content: { $case: "data" as const, value: { results } }, metadata: undefined, filename: "", mediaType: "" },
      ],
    };
    const done = asTask(
      await client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }),
    );
    expect(done.id).toBe(asked.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("lists the caller's tasks across contexts, newest first, and not another member's", async () => {
    const binding: Binding = "JSONRPC";
    const script = await scriptUpstream([
      { type: "completion", content: "One." },
      { type: "completion", content: "Two." },
    ]);
    const carol = await a2aClient(binding, TEST_KEYS.otherMember.key);
    const first = asTask(await carol.sendMessage(send(`one ${script.marker}`)));
    const second = asTask(await carol.sendMessage(send(`two ${script.marker}`)));
    expect(second.contextId).not.toBe(first.contextId);
    const query = {
      tenant: "",
      contextId: "",
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    };
    const listed = await carol.listTasks(query);
    expect(listed.tasks.map((t) => t.id).slice(0, 2)).toEqual([second.id, first.id]);
    const bob = await a2aClient(binding, TEST_KEYS.chat.key);
    const bobs = await bob.listTasks({ ...query, pageSize: 100 });
    expect(bobs.tasks.map((t) => t.id)).not.toContain(first.id);
  });

  it("keeps a task an admin starts in a member's context the member's: the member finds it and lists it", async () => {
    const binding: Binding = "HTTP+JSON";
    const script = await scriptUpstream([
      { type: "completion", content: "Carol's own." },
      { type: "completion", content: "An admin's." },
    ]);
    const carol = await a2aClient(binding, TEST_KEYS.otherMember.key);
    const hers = asTask(await carol.sendMessage(send(`mine ${script.marker}`)));
    const admin = await a2aClient(binding, TEST_KEYS.admin.key);
    const message = { ...userMessage(`from an admin ${script.marker}`), contextId: hers.contextId };
    const started = asTask(
      await admin.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }),
    );
    expect(started.contextId).toBe(hers.contextId);
    expect((await carol.getTask({ tenant: "", id: started.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const listed = await carol.listTasks({
      tenant: "",
      contextId: hers.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([started.id, hers.id]);
  });
});

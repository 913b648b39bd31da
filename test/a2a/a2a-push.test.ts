// A2A push notifications with the official client over both bindings: a task's push notification config (create,
// get, list, delete), and the task's update delivered through the webhook queue to a receiver, in A2A's payload
// with the client's token, signed; another org's task and a private URL refused.
import { StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";
import { receivedAtLeast, receiverUrl } from "../webhooks/fixtures";
import { a2aClient, BINDINGS, type Binding, userMessage } from "./fixtures";

const hello = { name: "agent_hello_world", arguments: '{"name":"Dana"}' };

/** A task waiting for approval, and the script whose next answer ends it. */
async function taskAwaitingApproval(binding: Binding): Promise<Task> {
  const mode = await mcpMode(["agent_hello_world"], ["agent_hello_world"]);
  const script = await scriptUpstream([
    { type: "completion", toolCalls: [hello] },
    { type: "completion", content: "Greeted." },
  ]);
  const client = await a2aClient(binding, TEST_KEYS.chat.key);
  const sent = await client.sendMessage({
    tenant: "",
    message: userMessage(`greet Dana ${script.marker}`),
    configuration: undefined,
    metadata: { skillId: mode },
  });
  if ("messageId" in sent) throw new Error("expected a task");
  return sent;
}

const config = (taskId: string, url: string, id = "") => ({
  tenant: "",
  id,
  taskId,
  url,
  token: "client-token-1",
  authentication: undefined,
});

describe.each(BINDINGS)("A2A push notifications over %s", (binding) => {
  it("delivers the task's update to the config's URL, in A2A's payload with the token, signed", async () => {
    const task = await taskAwaitingApproval(binding);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const hook = receiverUrl("a2a-push");
    await client.createTaskPushNotificationConfig(config(task.id, hook.url));
    await client.sendMessage({
      tenant: "",
      message: userMessage("yes", { taskId: task.id }),
      configuration: undefined,
      metadata: undefined,
    });
    const [delivery] = await receivedAtLeast(hook.name, 1);
    expect(delivery?.headers["x-a2a-notification-token"]).toBe("client-token-1");
    expect(delivery?.headers["content-type"]).toBe("application/a2a+json");
    expect(delivery?.headers["webhook-signature"]).toMatch(/^v1,/);
    const update = StreamResponse.fromJSON(JSON.parse(delivery?.body ?? "{}")).payload;
    expect(update?.$case).toBe("statusUpdate");
    if (update?.$case !== "statusUpdate") return;
    expect(update.value).toMatchObject({ taskId: task.id, contextId: task.contextId });
    expect(update.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("creates, gets, lists and deletes a task's configs, never answering the token again", async () => {
    const task = await taskAwaitingApproval(binding);
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const hook = receiverUrl("a2a-configs");
    const created = await client.createTaskPushNotificationConfig(config(task.id, hook.url, "mine"));
    expect(created).toMatchObject({ id: "mine", taskId: task.id, url: hook.url, token: "" });
    expect(await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "mine" })).toMatchObject({
      id: "mine",
      url: hook.url,
    });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs.map((c) => c.id)).toEqual(["mine"]);
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "mine" });
    const after = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(after.configs).toEqual([]);
  });
});

describe("A2A push notification configs refused (the same handler behind both bindings)", () => {
  it("answers another org's task as not found, and refuses a private address", async () => {
    const binding: Binding = "HTTP+JSON";
    const task = await taskAwaitingApproval(binding);
    const other = await a2aClient(binding, TEST_KEYS.otherOrg.key);
    await expect(
      other.createTaskPushNotificationConfig(config(task.id, receiverUrl("a2a-other").url)),
    ).rejects.toMatchObject({ name: "TaskNotFoundError" });
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    await expect(
      client.createTaskPushNotificationConfig(config(task.id, "https://10.0.0.7/hook")),
    ).rejects.toMatchObject({
      name: "RequestMalformedError",
    });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs).toEqual([]);
  });
});

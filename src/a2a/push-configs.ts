// A2A push notification configs (Create/Get/List/DeleteTaskPushNotificationConfig): each is a webhook endpoint told
// of one task's turn only (src/webhooks/endpoint-store.ts), so a task's updates go out through the webhook queue,
// signed, retried with backoff and disabled as every webhook is, in A2A's payload with the client's token
// (src/webhooks/a2a-push-payload.ts). The token is sealed and never shown again; the URL is checked as a webhook's is.
import type { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { PushNotificationNotSupportedError, RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import type { Db } from "../db";
import { quoted } from "../quote";
import type { Caller } from "../session/caller";
import { settings } from "../settings";
import { secretBoxOf } from "../tenancy/org-secrets";
import { type StoredEndpoint, WebhookEndpoints } from "../webhooks/endpoint-store";
import { newSigningSecret } from "../webhooks/signing";
import { webhookUrlProblem } from "../webhooks/webhook-url";
import type { IndexedTask } from "./task-index";

/** The most push notification configs one task keeps. */
export const MAX_PUSH_CONFIGS_PER_TASK = 10;

const CONFIG_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The turn events a task's push notifications tell: where it stopped (completed, failed, cancelled, paused). */
const TURN_EVENTS = ["turn.completed", "turn.failed", "turn.paused"];

const endpointIdOf = (taskId: string, id: string) => `a2a:${taskId}:${id}`;

function configOf(endpoint: StoredEndpoint, taskId: string): TaskPushNotificationConfig {
  const prefix = endpointIdOf(taskId, "");
  // The token is the client's secret: never answered again.
  return {
    tenant: "",
    id: endpoint.id.slice(prefix.length),
    taskId,
    url: endpoint.url,
    token: "",
    authentication: undefined,
  };
}

export class PushConfigs {
  private readonly endpoints: WebhookEndpoints;

  constructor(
    private readonly env: Cloudflare.Env,
    db: Db,
    private readonly caller: Caller,
  ) {
    this.endpoints = new WebhookEndpoints(db);
  }

  async create(task: IndexedTask, asked: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    const problem = asked.url
      ? webhookUrlProblem(asked.url, settings(this.env).webhooks.allowHttpLoopback)
      : "is required.";
    if (problem) throw new RequestMalformedError(`url ${problem.replace(/^an? webhook endpoint /, "")}`);
    const id = asked.id || crypto.randomUUID().replaceAll("-", "").slice(0, 16);
    if (!CONFIG_ID.test(id)) throw new RequestMalformedError("id must be 1 to 64 letters, digits, '_' or '-'.");
    if (asked.token.length > 1_000) throw new RequestMalformedError("token must be at most 1000 characters.");
    const box = await secretBoxOf(this.env);
    if (!box) throw new PushNotificationNotSupportedError("Push notifications need the deployment's SECRETS_KEY.");
    const existing = await this.endpoints.listA2A(task.taskId);
    if (existing.some((endpoint) => endpoint.id === endpointIdOf(task.taskId, id))) {
      throw new RequestMalformedError(
        `Task ${quoted(task.taskId)} has a push notification config ${quoted(id)} already.`,
      );
    }
    if (existing.length >= MAX_PUSH_CONFIGS_PER_TASK) {
      throw new RequestMalformedError(`A task keeps at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs.`);
    }
    const endpoint = {
      org: task.org,
      ownerUser: task.user,
      createdBy: this.caller.user,
      url: asked.url,
      events: TURN_EVENTS,
      description: `A2A push notifications of task ${task.taskId}`,
    };
    const push = { taskId: task.taskId, token: asked.token, secret: newSigningSecret() };
    await this.endpoints.insertA2A(box, endpointIdOf(task.taskId, id), endpoint, push, new Date().toISOString());
    return { tenant: "", id, taskId: task.taskId, url: asked.url, token: "", authentication: undefined };
  }

  async list(task: IndexedTask): Promise<TaskPushNotificationConfig[]> {
    return (await this.endpoints.listA2A(task.taskId)).map((endpoint) => configOf(endpoint, task.taskId));
  }

  async get(task: IndexedTask, id: string): Promise<TaskPushNotificationConfig> {
    const found = (await this.endpoints.listA2A(task.taskId)).find((e) => e.id === endpointIdOf(task.taskId, id));
    if (!found)
      throw new TaskNotFoundError(`Task ${quoted(task.taskId)} has no push notification config ${quoted(id)}.`);
    return configOf(found, task.taskId);
  }

  async delete(task: IndexedTask, id: string): Promise<void> {
    if (!(await this.endpoints.deleteA2A(task.taskId, endpointIdOf(task.taskId, id)))) {
      throw new TaskNotFoundError(`Task ${quoted(task.taskId)} has no push notification config ${quoted(id)}.`);
    }
  }
}

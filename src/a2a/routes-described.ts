// The A2A door's routes in /openapi.json. They are declared for the document only: the bodies are the protocol's
// (JSON-RPC envelopes, the HTTP+JSON binding's messages), read and answered by the SDK's converters, not by zod.
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type AppBindings, BEARER } from "../http";
import { JSONRPC_PATH, REST_PATH } from "./agent-card";

const A2A_ERRORS = {
  400: { description: "Malformed, or not supported (the binding's error: `{error:{code,status,message,details}}`)." },
  401: { description: "No key, or an unknown or revoked key." },
  404: { description: "No such task (another org's or member's task too)." },
};

type Method = "get" | "post" | "delete";

export function describeA2A(app: OpenAPIHono<AppBindings>): void {
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/.well-known/agent-card.json",
    tags: ["a2a"],
    security: [],
    summary: "The public A2A agent card: the deployment's modes as skills, the two interfaces, the security schemes",
    responses: { 200: { description: "The agent card (A2A 1.0)." } },
  });
  app.openAPIRegistry.registerPath({
    method: "post",
    path: JSONRPC_PATH,
    tags: ["a2a"],
    security: BEARER,
    summary:
      "A2A over JSON-RPC 2.0 (A2A-Version: 1.0): SendMessage, SendStreamingMessage (SSE), GetTask, ListTasks, CancelTask, SubscribeToTask (SSE), GetExtendedAgentCard",
    responses: {
      200: { description: "The JSON-RPC response (errors carry the protocol's codes), or an event stream of them." },
      401: A2A_ERRORS[401],
    },
  });
  const rest: [Method, string, string][] = [
    ["get", "/extendedAgentCard", "The extended agent card: the modes the caller's org sees"],
    ["post", "/{op}", "message:send (SendMessage) or message:stream (SendStreamingMessage, SSE)"],
    ["get", "/tasks", "ListTasks: the caller's tasks, newest first"],
    ["get", "/tasks/{ref}", "GetTask ({id}) or SubscribeToTask ({id}:subscribe, SSE)"],
    ["post", "/tasks/{ref}", "CancelTask ({id}:cancel) or SubscribeToTask ({id}:subscribe, SSE)"],
    ["get", "/tasks/{id}/pushNotificationConfigs", "A task's push notification configs"],
    ["post", "/tasks/{id}/pushNotificationConfigs", "A push notification config for a task"],
    ["get", "/tasks/{id}/pushNotificationConfigs/{configId}", "One push notification config"],
    ["delete", "/tasks/{id}/pushNotificationConfigs/{configId}", "Deletes a push notification config"],
  ];
  for (const [method, path, summary] of rest) {
    app.openAPIRegistry.registerPath({
      method,
      path: `${REST_PATH}${path}`,
      tags: ["a2a"],
      security: BEARER,
      summary: `A2A over HTTP+JSON: ${summary}`,
      responses: { 200: { description: "The binding's answer." }, ...A2A_ERRORS },
    });
  }
}

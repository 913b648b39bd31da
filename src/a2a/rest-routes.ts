// /a2a/rest/*: the A2A HTTP+JSON binding, answered as the SDK's own REST handler answers it (its paths, its JSON
// through the SDK's converters, its errors as `{"error":{code,status,message,details}}` by toRestErrorBody); the SDK
// ships that handler for Express only, so its routes are declared here on Hono, over the same request handler.
import {
  A2A_CONTENT_TYPE,
  AgentCard,
  formatSSEErrorEvent,
  formatSSEEvent,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageRequest,
  SSE_HEADERS,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  TaskState,
  taskStateFromJSON,
} from "@a2a-js/sdk";
import {
  ContentTypeNotSupportedError,
  RequestMalformedError,
  restStatusFor,
  toRestErrorBody,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import { requireScope } from "../auth/middleware";
import type { AppContext } from "../http";
import { routes } from "../http";
import { REST_PATH } from "./agent-card";
import { a2aCall } from "./call";
import { unexpected } from "./guard";

const encoder = new TextEncoder();

type Action = (handler: A2ARequestHandler, context: ServerCallContext) => Promise<Response>;

function errorAnswer(c: AppContext, error: unknown): Response {
  const known = unexpected(c.get("logger"), c.get("requestId"), error);
  const status = restStatusFor(known);
  return new Response(JSON.stringify(toRestErrorBody(known, status)), {
    status,
    headers: { "content-type": A2A_CONTENT_TYPE },
  });
}

function jsonAnswer(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": A2A_CONTENT_TYPE } });
}

/** Runs an action of the binding: the version checked first, every failure answered in the binding's shape. */
async function run(c: AppContext, action: Action): Promise<Response> {
  const { handler, context, checkVersion } = a2aCall(c, "HTTP+JSON");
  try {
    checkVersion();
    return await action(handler, context);
  } catch (error) {
    return errorAnswer(c, error);
  }
}

/** The JSON body of a request (`{}` when empty): JSON sent as application/json or application/a2a+json only. */
async function bodyOf(c: AppContext): Promise<Record<string, unknown>> {
  const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
  const text = await c.req.text();
  if (!text) return {};
  if (type !== undefined && type !== "application/json" && type !== A2A_CONTENT_TYPE) {
    throw new ContentTypeNotSupportedError(
      `Unsupported Content-Type ${JSON.stringify(c.req.header("content-type"))}; expected application/json or application/a2a+json.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RequestMalformedError("Invalid JSON payload.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new RequestMalformedError("The request body must be a JSON object.");
  }
  return parsed as Record<string, unknown>;
}

async function streamAnswer(c: AppContext, stream: AsyncGenerator<StreamResponse>): Promise<Response> {
  const first = await stream.next();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(encoder.encode(formatSSEEvent(StreamResponse.toJSON(first.value))));
    },
    async pull(controller) {
      try {
        const next = await stream.next();
        if (next.done) {
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(formatSSEEvent(StreamResponse.toJSON(next.value))));
      } catch (error) {
        const known = unexpected(c.get("logger"), c.get("requestId"), error);
        controller.enqueue(encoder.encode(formatSSEErrorEvent(toRestErrorBody(known, restStatusFor(known)))));
        controller.close();
      }
    },
    async cancel() {
      await stream.return(undefined);
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

function sendRequest(body: Record<string, unknown>): SendMessageRequest {
  const request = SendMessageRequest.fromJSON(body);
  if (!request.message) throw new RequestMalformedError("message is required");
  if (!request.message.messageId) throw new RequestMalformedError("message.messageId is required");
  return request;
}

function integerQuery(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new RequestMalformedError(`${name} must be a valid integer`);
  return parsed;
}

/** A task path's last segment: its id, and the verb after a colon (`{id}:cancel`, `{id}:subscribe`). */
function taskRef(ref: string): { id: string; verb: string | null } {
  const colon = ref.lastIndexOf(":");
  return colon < 0 ? { id: ref, verb: null } : { id: ref.slice(0, colon), verb: ref.slice(colon + 1) };
}

function unknownPath(c: AppContext): never {
  throw new RequestMalformedError(`No A2A method at ${c.req.method} ${new URL(c.req.url).pathname}.`);
}

export const a2aRestRoutes = routes()
  .use(`${REST_PATH}/*`, requireScope("chat"))
  .get(`${REST_PATH}/extendedAgentCard`, (c) =>
    run(c, async (handler, context) =>
      jsonAnswer(AgentCard.toJSON(await handler.getAuthenticatedExtendedAgentCard({ tenant: "" }, context))),
    ),
  )
  .post(`${REST_PATH}/:op`, (c) =>
    run(c, async (handler, context) => {
      const op = c.req.param("op");
      if (op !== "message:send" && op !== "message:stream") return unknownPath(c);
      const request = sendRequest(await bodyOf(c));
      if (op === "message:stream") return streamAnswer(c, handler.sendMessageStream(request, context));
      const task = await handler.sendMessage(request, context);
      const result = "messageId" in task ? { message: task } : { task: Task.toJSON(task) };
      return jsonAnswer(result);
    }),
  )
  .get(`${REST_PATH}/tasks`, (c) =>
    run(c, async (handler, context) => {
      const query = c.req.query();
      const includeArtifacts = query.includeArtifacts === "true";
      const result = await handler.listTasks(
        {
          tenant: "",
          contextId: query.contextId ?? "",
          status: query.status ? taskStateFromJSON(query.status) : TaskState.TASK_STATE_UNSPECIFIED,
          pageSize: integerQuery(query.pageSize, "pageSize"),
          pageToken: query.pageToken ?? "",
          historyLength: integerQuery(query.historyLength, "historyLength"),
          statusTimestampAfter: query.statusTimestampAfter || undefined,
          includeArtifacts,
        },
        context,
      );
      return jsonAnswer(ListTasksResponse.toJSON(result));
    }),
  )
  .on(["GET", "POST"], `${REST_PATH}/tasks/:ref`, (c) =>
    run(c, async (handler, context) => {
      const { id, verb } = taskRef(c.req.param("ref"));
      if (verb === "subscribe") return streamAnswer(c, handler.resubscribe({ tenant: "", id }, context));
      if (verb === "cancel" && c.req.method === "POST") {
        return jsonAnswer(Task.toJSON(await handler.cancelTask({ tenant: "", id, metadata: {} }, context)));
      }
      if (verb === null && c.req.method === "GET") {
        const historyLength = integerQuery(c.req.query("historyLength"), "historyLength");
        return jsonAnswer(Task.toJSON(await handler.getTask({ tenant: "", id, historyLength }, context)));
      }
      return unknownPath(c);
    }),
  )
  .on(["GET", "POST"], `${REST_PATH}/tasks/:id/pushNotificationConfigs`, (c) =>
    run(c, async (handler, context) => {
      const taskId = c.req.param("id");
      if (c.req.method === "GET") {
        const request = { tenant: "", taskId, pageSize: 0, pageToken: "" };
        const list = await handler.listTaskPushNotificationConfigs(request, context);
        return jsonAnswer(ListTaskPushNotificationConfigsResponse.toJSON(list));
      }
      const asked = TaskPushNotificationConfig.fromJSON({ ...(await bodyOf(c)), taskId });
      const created = await handler.createTaskPushNotificationConfig(asked, context);
      return jsonAnswer(TaskPushNotificationConfig.toJSON(created), 201);
    }),
  )
  .on(["GET", "DELETE"], `${REST_PATH}/tasks/:id/pushNotificationConfigs/:configId`, (c) =>
    run(c, async (handler, context) => {
      const params = { tenant: "", taskId: c.req.param("id"), id: c.req.param("configId") };
      if (c.req.method === "DELETE") {
        await handler.deleteTaskPushNotificationConfig(params, context);
        return new Response(null, { status: 204 });
      }
      return jsonAnswer(
        TaskPushNotificationConfig.toJSON(await handler.getTaskPushNotificationConfig(params, context)),
      );
    }),
  );

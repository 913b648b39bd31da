// Bad input at the A2A door: each refusal is the protocol's (a JSON-RPC error code, or the HTTP+JSON binding's
// error body), names what was wrong, and creates nothing (no session, no task).

import { env, exports } from "cloudflare:workers";
import { Role } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { TEST_KEYS } from "../fixtures/keys";
import { a2aClient, BINDINGS, ORIGIN, userMessage } from "./fixtures";

/** How many sessions and A2A tasks the member has: what a refused request must leave as it was. */
async function created(): Promise<{ sessions: number; tasks: number }> {
  const [sessions, tasks] = await env.DB.batch<{ n: number }>([
    env.DB.prepare("SELECT COUNT(*) AS n FROM session_index WHERE org = ? AND user_id = ?").bind(
      TEST_KEYS.chat.org,
      TEST_KEYS.chat.user,
    ),
    env.DB.prepare("SELECT COUNT(*) AS n FROM a2a_tasks WHERE org = ?").bind(TEST_KEYS.chat.org),
  ]);
  return { sessions: sessions?.results[0]?.n ?? -1, tasks: tasks?.results[0]?.n ?? -1 };
}

async function refusedWithNothingCreated(refusal: Promise<unknown>): Promise<unknown> {
  const before = await created();
  const error = await refusal.then(
    () => null,
    (e: unknown) => e,
  );
  expect(await created()).toEqual(before);
  return error;
}

function rpc(body: unknown, headers: Record<string, string> = {}) {
  return exports.default.fetch(`${ORIGIN}/a2a/jsonrpc`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TEST_KEYS.chat.key}`,
      "content-type": "application/json",
      "a2a-version": "1.0",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function rest(path: string, init: RequestInit = {}) {
  return exports.default.fetch(`${ORIGIN}/a2a/rest${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${TEST_KEYS.chat.key}`,
      "content-type": "application/json",
      "a2a-version": "1.0",
      ...(init.headers as Record<string, string> | undefined),
    },
  });
}

describe.each(BINDINGS)("bad input to the A2A door over %s, with the official client", (binding) => {
  it("refuses an unknown skill, naming the skills there are", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const error = await refusedWithNothingCreated(
      client.sendMessage({
        tenant: "",
        message: userMessage("hi"),
        configuration: undefined,
        metadata: { skillId: "nope" },
      }),
    );
    expect(error).toMatchObject({ name: "RequestMalformedError" });
    expect(String((error as Error).message)).toMatch(/Unknown skill 'nope'; the skills are: .*general/);
  });

  it("refuses a message with no text", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const message = { ...userMessage(""), parts: [] };
    const error = await refusedWithNothingCreated(
      client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }),
    );
    expect(error).toMatchObject({
      name: "RequestMalformedError",
      message: "message.parts must have at least one part.",
    });
  });

  it("refuses a file part as a content type it does not take", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const message = {
      ...userMessage(""),
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: "url" as const, value: "https://files.example/a.pdf" },
          metadata: undefined,
          filename: "a.pdf",
          mediaType: "application/pdf",
        },
      ],
    };
    const error = await refusedWithNothingCreated(
      client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }),
    );
    expect(error).toMatchObject({ name: "ContentTypeNotSupportedError" });
  });

  it("answers a context that is not the caller's as not found", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    const error = await refusedWithNothingCreated(
      client.sendMessage({
        tenant: "",
        message: userMessage("hi", { contextId: "f".repeat(64) }),
        configuration: undefined,
        metadata: undefined,
      }),
    );
    expect(error).toMatchObject({ name: "TaskNotFoundError" });
  });

  it("answers a task that never was as not found, on get and on cancel", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    await expect(client.getTask({ tenant: "", id: "no-such-task" })).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
    await expect(client.cancelTask({ tenant: "", id: "no-such-task", metadata: undefined })).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
  });

  it("refuses a page size out of range", async () => {
    const client = await a2aClient(binding, TEST_KEYS.chat.key);
    await expect(
      client.listTasks({
        tenant: "",
        contextId: "",
        status: 0,
        pageSize: 500,
        pageToken: "",
        statusTimestampAfter: undefined,
      }),
    ).rejects.toMatchObject({ name: "RequestMalformedError" });
  });
});

describe("bad input to the A2A JSON-RPC binding", () => {
  it("answers an unknown method with -32601", async () => {
    const body = (await (await rpc({ jsonrpc: "2.0", id: 1, method: "DoSomething", params: {} })).json()) as {
      error: { code: number };
    };
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: -32601 } });
  });

  it("answers a body that is not JSON with -32700", async () => {
    const body = await (await rpc("{")).json();
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("answers SendMessage without a message with -32602, naming the field", async () => {
    const before = await created();
    const body = await (await rpc({ jsonrpc: "2.0", id: "a", method: "SendMessage", params: {} })).json();
    expect(body).toMatchObject({ id: "a", error: { code: -32602, message: "message is required." } });
    expect(await created()).toEqual(before);
  });

  it("answers a request without A2A-Version 1.0 as a version it does not support (-32009)", async () => {
    const body = await (
      await rpc({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "x" } }, { "a2a-version": "0.3" })
    ).json();
    expect(body).toMatchObject({ id: 2, error: { code: -32009 } });
  });
});

describe("bad input to the A2A HTTP+JSON binding", () => {
  it("answers a body that is not JSON with 400 INVALID_ARGUMENT", async () => {
    const response = await rest("/message:send", { method: "POST", body: "{" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 400, status: "INVALID_ARGUMENT", message: "Invalid JSON payload." },
    });
  });

  it("answers a body sent as another content type with 400, naming it", async () => {
    const response = await rest("/message:send", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; details: { reason: string }[] } };
    expect(body.error.message).toContain('"text/plain"');
    expect(body.error.details[0]?.reason).toBe("CONTENT_TYPE_NOT_SUPPORTED");
  });

  it("answers an unknown task with 404 NOT_FOUND", async () => {
    const response = await rest("/tasks/no-such-task");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
  });

  it("answers a task state filter that is no state with 400, naming the field", async () => {
    const response = await rest("/tasks?status=TASK_STATE_BOGUS");
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { status: string; message: string } };
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.message).toMatch(/^status must be a task state/);
  });

  it("answers a path that is no method with 400", async () => {
    const response = await rest("/tasks/x:explode", { method: "POST" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { status: "INVALID_ARGUMENT" } });
  });
});

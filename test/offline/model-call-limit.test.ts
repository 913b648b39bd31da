// One budget of model calls per key (the MODEL_CALL_LIMITER binding; the offline project allows OFFLINE_MODEL_CALL_LIMIT a minute):
// passthrough requests and agent turns count together; past it, 429 in OpenAI's shape with Retry-After
// before anything is stored, and a running turn that reaches it ends with its own code, losing nothing.
import OpenAI from "openai";
import { beforeEach, describe, expect, it } from "vitest";
import type { SessionView } from "../../src/wire/session";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { type ErrorBody, newChatKey, openai, type TestKey, worker } from "../passthrough/harness";
import { OFFLINE_MODEL_CALL_LIMIT } from "./limit";
import { awayFromWindowEdge } from "./window";

const LIMIT = OFFLINE_MODEL_CALL_LIMIT;

const listModels = (key: TestKey) =>
  worker.fetch("http://localhost/v1/models", { headers: { authorization: `Bearer ${key.key}` } });

async function spend(key: TestKey, calls: number): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const response = await listModels(key);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  }
}

async function api(key: TestKey, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return worker.fetch(`http://localhost${path}`, {
    method,
    headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function newSession(key: TestKey): Promise<string> {
  const response = await api(key, "POST", "/context/sessions", {});
  return ((await response.json()) as { sessionId: string }).sessionId;
}

async function session(key: TestKey, id: string): Promise<SessionView> {
  return (await (await api(key, "GET", `/context/sessions/${id}`)).json()) as SessionView;
}

describe("one model call budget per key", () => {
  beforeEach(() => awayFromWindowEdge());

  it("answers 429 with Retry-After and rate_limit_exceeded once a key passes its limit on /v1", async () => {
    const key = await newChatKey();
    await spend(key, LIMIT);
    const response = await listModels(key);
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("60");
    expect(((await response.json()) as ErrorBody).error).toEqual({
      message:
        "Rate limit reached for this API key on model calls per minute (passthrough requests and agent turns count together). Please try again in 60s.",
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
      param: null,
    });
  });

  it("counts each key apart: another key of the same org is still served", async () => {
    await spend(await newChatKey("org-a"), LIMIT);
    const models = await openai(await newChatKey("org-a")).models.list();
    expect(models.data).toHaveLength(1);
  });

  it("surfaces on /v1 as the SDK's RateLimitError", async () => {
    const key = await newChatKey();
    await spend(key, LIMIT);
    const error = await openai(key)
      .models.list()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
  });

  it("refuses a message with 429 and Retry-After once the passthrough spent the key's calls, storing nothing", async () => {
    const key = await newChatKey();
    const id = await newSession(key);
    await spend(key, LIMIT);
    const response = await api(key, "POST", `/context/sessions/${id}/messages`, { content: "say hello to Dana" });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("60");
    expect(((await response.json()) as ErrorBody).error.code).toBe("rate_limit_exceeded");
    const after = await session(key, id);
    expect([after.status, after.conversation.length, after.turns.length]).toEqual(["idle", 0, 0]);
  });

  it("refuses a streamed message with 429 before its event stream opens", async () => {
    const key = await newChatKey();
    const id = await newSession(key);
    await spend(key, LIMIT);
    const response = await api(
      key,
      "POST",
      `/context/sessions/${id}/messages`,
      { content: "say hello to Dana" },
      { accept: "text/event-stream" },
    );
    expect(response.status).toBe(429);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("retry-after")).toBe("60");
  });

  it("refuses a streamed /agent/v1 completion with 429 before its event stream opens, starting no session", async () => {
    const key = await newChatKey();
    await spend(key, LIMIT);
    const response = await api(key, "POST", "/agent/v1/chat/completions", {
      model: "aptix-agent/general",
      stream: true,
      messages: [{ role: "user", content: "say hello to Dana" }],
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.headers.get("retry-after")).toBe("60");
    expect(response.headers.get("x-aptix-session")).toBeNull();
    expect(((await response.json()) as ErrorBody).error.code).toBe("rate_limit_exceeded");
  });

  it("counts every model call of a turn: after a two-call turn the passthrough has three left", async () => {
    const key = await newChatKey();
    const id = await newSession(key);
    const turn = await api(key, "POST", `/context/sessions/${id}/messages`, { content: "say hello to Dana" });
    expect(((await turn.json()) as AgentExecuteResponse).iterations).toBe(2);
    await spend(key, LIMIT - 2);
    expect((await listModels(key)).status).toBe(429);
  });

  it("ends a running turn that reaches the limit with rate_limit_exceeded, keeping its message and tool results", async () => {
    const key = await newChatKey();
    const id = await newSession(key);
    await spend(key, LIMIT - 1);
    const response = await api(key, "POST", `/context/sessions/${id}/messages`, { content: "say hello to Dana" });
    expect(response.status).toBe(200);
    const turn = (await response.json()) as AgentExecuteResponse;
    expect(turn.status).toBe("failed");
    expect(turn.error?.code).toBe("rate_limit_exceeded");
    expect(turn.toolCalls.map((c) => [c.name, c.wasExecuted])).toEqual([["agent_hello_world", true]]);
    const after = await session(key, id);
    expect(after.status).toBe("idle");
    expect(after.conversation.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(after.turns.map((t) => t.error?.code)).toEqual(["rate_limit_exceeded"]);
  });
});

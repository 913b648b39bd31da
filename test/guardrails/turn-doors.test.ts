// The guardrails on the doors besides plain REST. The session's streams (SSE, the WebSocket): a blocked message is an
// error frame and nothing goes upstream; a redacting output guardrail holds the step's text until it is checked (the
// stream gets it whole, with placeholders); a blocking one ends the turn with an error frame naming the guardrail.
// The agent's OpenAI, Responses and Messages doors: a blocked message or answer is each door's own 400 error naming
// the guardrail (OpenAI's `guardrail_blocked`, Anthropic's `invalid_request_error`).
import { exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { a2aClient, userMessage } from "../a2a/fixtures";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";
import { newUserKey } from "../passthrough/harness";
import { EMAIL, one, setOrgGuardrails } from "./turn-setup";

// The org's list is kept per isolate: the file leaves none behind for another file the isolate may run.
afterAll(() => setOrgGuardrails([]));

type Frame = { type: string } & Record<string, unknown>;

/** The frames of one message sent with Accept: text/event-stream. */
async function overSse(sessionId: string, content: string): Promise<Frame[]> {
  const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ content }),
  });
  const text = await response.text();
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const data = block.split("\n").find((line) => line.startsWith("data: ")) ?? "data: {}";
      const event = block.split("\n").find((line) => line.startsWith("event: ")) ?? "event: ";
      return { ...(JSON.parse(data.slice(6)) as Record<string, unknown>), type: event.slice(7) };
    });
}

/** The frames of one message sent on the session's socket, up to the frame `until` names. */
async function overSocket(sessionId: string, content: string, until: string): Promise<Frame[]> {
  const socket = await openSocket(sessionId);
  try {
    socket.send({ type: "user_message", content, clientMessageId: "m1" });
    await socket.waitForType(until);
    return socket.frames.slice(1);
  } finally {
    socket.close();
  }
}

const doors = [
  { door: "SSE", send: (id: string, content: string, _until: string) => overSse(id, content) },
  { door: "WebSocket", send: overSocket },
];

describe.each(doors)("over $door", ({ send }) => {
  it("a message an input guardrail blocks is an error frame naming it, and nothing goes upstream", async () => {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const frames = await send(await createSession(), `mail ${EMAIL} ${script.marker}`, "error");
    const error = frames.find((f) => f.type === "error");
    expect({ code: error?.code, names: String(error?.message).includes('"pii"') }).toEqual({
      code: "guardrail_blocked",
      names: true,
    });
    expect(frames.some((f) => f.type === "turn_started")).toBe(false);
    expect(await script.bodies()).toEqual([]);
  });

  it("an answer an output guardrail redacts streams whole, with placeholders", async () => {
    await setOrgGuardrails([one("pii", "output", "redact")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL} today.` }]);
    const frames = await send(await createSession(), `who? ${script.marker}`, "turn_completed");
    const deltas = frames.filter((f) => f.type === "assistant_delta").map((f) => f.text);
    const done = frames.find((f) => f.type === "turn_completed")?.response as { text: string };
    expect({ deltas, text: done.text }).toEqual({ deltas: ["Mail [EMAIL_1] today."], text: "Mail [EMAIL_1] today." });
  });

  it("an answer an output guardrail blocks ends the turn with an error frame naming it, and no text", async () => {
    await setOrgGuardrails([one("pii", "output", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL} today.` }]);
    const frames = await send(await createSession(), `who? ${script.marker}`, "error");
    const error = frames.find((f) => f.type === "error");
    expect({ code: error?.code, names: String(error?.message).includes('"pii"') }).toEqual({
      code: "guardrail_blocked",
      names: true,
    });
    expect(frames.filter((f) => f.type === "assistant_delta")).toEqual([]);
    expect(JSON.stringify(frames)).not.toContain(EMAIL);
  });
});

const bearer = { authorization: `Bearer ${TEST_KEYS.chat.key}` };

const DOORS = [
  {
    door: "chat completions",
    path: "/agent/v1/chat/completions",
    body: (text: string) => ({ model: "aptix-agent/general", messages: [{ role: "user", content: text }] }),
    headers: bearer,
  },
  {
    door: "Responses",
    path: "/agent/v1/responses",
    body: (text: string) => ({ model: "aptix-agent/general", input: text }),
    headers: bearer,
  },
  {
    door: "Messages",
    path: "/agent/v1/messages",
    body: (text: string) => ({
      model: "aptix-agent/general",
      max_tokens: 64,
      messages: [{ role: "user", content: text }],
    }),
    headers: { "x-api-key": TEST_KEYS.chat.key },
  },
];

/** The sessions a person's list shows. */
async function sessionsOf(key: string): Promise<unknown[]> {
  const listed = await call("GET", "/context/sessions", undefined, key);
  return (listed.json as { sessions: unknown[] }).sessions;
}

/** The door's error as one shape: status, code (OpenAI) or type (Anthropic), and whether it names the guardrail. */
async function refusalOf(response: Response) {
  const body = (await response.json()) as { error: { code?: string; type: string; message: string } };
  return {
    status: response.status,
    code: body.error.code ?? body.error.type,
    names: body.error.message.includes('"pii"'),
  };
}

describe.each(DOORS)("the agent's $door door", ({ door, path, body, headers }) => {
  const code = door === "Messages" ? "invalid_request_error" : "guardrail_blocked";

  it("refuses a message an input guardrail blocks, naming it, and sends nothing upstream", async () => {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const response = await exports.default.fetch(`http://aptix.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body(`mail ${EMAIL} ${script.marker}`)),
    });
    expect(await refusalOf(response)).toEqual({ status: 400, code, names: true });
    expect(await script.bodies()).toEqual([]);
  });

  /** A person of their own sends a new conversation's first message, which an input guardrail blocks. */
  async function blockedFirstMessage(extra: Record<string, unknown> = {}) {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const person = await newUserKey();
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const asPerson: Record<string, string> =
      door === "Messages" ? { "x-api-key": person.key } : { authorization: `Bearer ${person.key}` };
    const response = await exports.default.fetch(`http://aptix.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...asPerson },
      body: JSON.stringify({ ...body(`mail ${EMAIL} ${script.marker}`), ...extra }),
    });
    return { response, person };
  }

  it("refuses a streamed new conversation's blocked message before any stream, and leaves no session", async () => {
    const { response, person } = await blockedFirstMessage({ stream: true });
    expect(await refusalOf(response)).toEqual({ status: 400, code, names: true });
    expect(await sessionsOf(person.key)).toEqual([]);
  });

  it("leaves no session behind for a new conversation it refuses (the refusal names none)", async () => {
    const { response, person } = await blockedFirstMessage();
    expect(response.status).toBe(400);
    expect(await sessionsOf(person.key)).toEqual([]);
  });

  it("refuses an answer an output guardrail blocks, naming it", async () => {
    await setOrgGuardrails([one("pii", "output", "block")]);
    const script = await scriptUpstream([{ type: "completion", content: `Mail ${EMAIL}.` }]);
    const response = await exports.default.fetch(`http://aptix.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body(`who? ${script.marker}`)),
    });
    expect(await refusalOf(response)).toEqual({ status: 400, code, names: true });
  });
});

describe("the A2A door", () => {
  /** A person of their own sends a new task (no context) whose message an input guardrail blocks. */
  async function blockedNewTask(binding: "JSONRPC" | "HTTP+JSON", options: { polling?: boolean }) {
    await setOrgGuardrails([one("pii", "input", "block")]);
    const person = await newUserKey();
    const script = await scriptUpstream([{ type: "completion", content: "never" }]);
    const client = await a2aClient(binding, person.key, options);
    const message = userMessage(`mail ${EMAIL} ${script.marker}`);
    await expect(
      client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }),
    ).rejects.toThrow();
    return person;
  }

  it("leaves no context behind for a new task, sent to wait for its end, whose message an input guardrail blocks", async () => {
    const person = await blockedNewTask("HTTP+JSON", {});
    expect(await sessionsOf(person.key)).toEqual([]);
  });

  it("leaves no context behind for a new task whose message an input guardrail blocks", async () => {
    const person = await blockedNewTask("JSONRPC", { polling: true });
    expect(await sessionsOf(person.key)).toEqual([]);
  });
});

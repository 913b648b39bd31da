// Turns that survive a restart of their session's object (a deploy, an eviction, a crash): the object is aborted
// mid-turn, as the platform would stop it, and the turn resumes by itself from its last stored step when the
// object's alarm wakes it. A model call in flight is made again; a tool call that may have started runs again only
// if its tool is safe to repeat; a stored result never runs again; a turn resumes a bounded number of times.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { INTERRUPTED_CALL } from "../../src/agent/tool-batch";
import { BROKE_OFF, chatEventStream, completionMeta, doorChunks } from "../../src/agent-wire/completion";
import { mcpToolName } from "../../src/mcp/mcp-names";
import { settings } from "../../src/settings";
import type { SessionView } from "../../src/wire/session";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession, getSession } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream, type UpstreamScript } from "../fixtures/upstream";
import { oddUrl, registerServer, uniqueName } from "../mcp/fixtures";
import { modeOnRoute, toUpstreamA } from "../routing/fixtures";

const stubOf = (id: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));

/**
 * Stops the session's object as the platform would: its memory is gone, its storage (and alarm) stay, and the next
 * call builds a new instance. (The test runtime lets the old instance's code go on where it waits; the tests make it
 * wait on something that does not answer in the test's time: a model call that hangs, a tool's first call.)
 */
async function restartObject(id: string): Promise<void> {
  await runInDurableObject(stubOf(id), (_instance, state) => {
    state.abort("restarted by the test");
  }).catch(() => undefined);
}

/** The object wakes as its alarm fires (run now, rather than in `AGENT_RESUME_CHECK_MS`); the turn resumes. */
async function wakeByAlarm(id: string): Promise<void> {
  // Woken by anything, the object also sets its alarm for now: whichever runs first resumes the turn.
  await runDurableObjectAlarm(stubOf(id));
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const requestsMade = (script: UpstreamScript, count: number) =>
  until(
    () => script.requests(),
    (r) => r.length >= count,
    `${count} model requests`,
  );

const idle = (id: string) =>
  until(
    () => getSession(id),
    (s: SessionView) => s.status !== "running",
    "the turn to stop",
  );

/** Sends a message and waits until the model has been asked: the turn runs, and the request waits for it. */
async function startTurn(id: string, content: string): Promise<void> {
  // Its answer never comes: the instance that would send it was stopped.
  void call("POST", `/context/sessions/${id}/messages`, { content }).catch(() => undefined);
  await until(
    () => getSession(id),
    (s) => s.status === "running",
    "the turn to run",
  );
}

describe("a turn cut off by a restart", () => {
  it("arms the session's alarm while the turn works, AGENT_RESUME_CHECK_MS ahead", async () => {
    const script = await scriptUpstream([{ type: "hang" }]);
    const id = await createSession();
    const before = Date.now();
    await startTurn(id, `think ${script.marker}`);
    await requestsMade(script, 1);
    const alarm = await runInDurableObject(stubOf(id), (_instance, state) => state.storage.getAlarm());
    const { checkMs } = settings(env).resume;
    expect(alarm).toBeGreaterThanOrEqual(before + checkMs);
    expect(alarm).toBeLessThanOrEqual(Date.now() + checkMs);
    await restartObject(id);
  });

  /** A turn in `mode` whose first model call the object is stopped in, then woken; the model answers `answer`. */
  async function cutOffMidModelCall(mode: string | undefined, answer: string) {
    const script = await scriptUpstream([{ type: "hang" }, { type: "completion", content: answer }]);
    const id = await createSession(mode);
    await startTurn(id, `think ${script.marker}`);
    await requestsMade(script, 1);
    await restartObject(id);
    await wakeByAlarm(id);
    return { script, session: await idle(id) };
  }

  it("resumes a turn cut off mid model call: the call is made again from the stored conversation", async () => {
    const { script, session } = await cutOffMidModelCall(undefined, "Here after all.");
    expect(session.turns.map((t) => t.status)).toEqual(["completed"]);
    expect(session.conversation.map((m) => [m.role, m.content])).toEqual([
      ["user", `think ${script.marker}`],
      ["assistant", "Here after all."],
    ]);
    const [first, again] = [await script.messagesOf(0), await script.messagesOf(1)];
    expect(again).toEqual(first);
  });

  it("resumes a turn cut off mid model call on a route of the JSON tool format", async () => {
    const mode = await modeOnRoute(await toUpstreamA({ toolFormat: "json" }));
    const { script, session } = await cutOffMidModelCall(mode, "Here in JSON's world.");
    expect(session.turns.map((t) => t.status)).toEqual(["completed"]);
    expect(session.conversation.at(-1)).toMatchObject({ role: "assistant", content: "Here in JSON's world." });
    expect(await script.messagesOf(1)).toEqual(await script.messagesOf(0));
  });

  it("takes back the text a cut-off stream sent, and a socket that reconnects sees the frames carry on", async () => {
    const streamed =
      'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Half an ans"},"finish_reason":null}]}';
    const script = await scriptUpstream([
      { type: "sse", events: [streamed], end: "stall" },
      { type: "completion", content: "A whole answer." },
    ]);
    const id = await createSession();
    const socket = await openSocket(id);
    socket.send({ type: "user_message", content: `answer ${script.marker}`, clientMessageId: "m1" });
    await socket.waitForType("assistant_delta");
    const seen = socket.logged().at(-1)?.seq ?? 0;
    await restartObject(id);
    socket.close();

    await wakeByAlarm(id);
    await idle(id);
    const again = await openSocket(id, seen);
    const resumed = await again.waitForType("turn_resumed");
    expect(resumed).toMatchObject({ resumes: 1, discardedChars: "Half an ans".length, seq: seen + 1 });
    const done = await again.waitForType("turn_completed");
    expect(done.response).toMatchObject({ status: "completed", text: "A whole answer." });
    const seqs = again.logged().map((f) => f.seq);
    expect(seqs).toEqual(seqs.map((_, i) => seen + 1 + i));
    const deltas = again.logged().filter((f) => f.type === "assistant_delta");
    expect(deltas.map((f) => f.text).join("")).toBe("A whole answer.");
    again.close();
  });

  it("ends the agent door's stream cut off mid-answer with its error event, naming where the answer will be", async () => {
    // The frames from a session object that stopped after its first delta (the test runtime does not cut a stopped
    // object's streams, so the cut is made here).
    const delta = 'data: {"type":"assistant_delta","turnId":"t1","text":"Half","seq":2}\n\n';
    const frames = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(delta));
        controller.error(new Error("The Durable Object was reset."));
      },
    });
    const broken: unknown[] = [];
    const stream = chatEventStream(
      doorChunks(frames, completionMeta("aptix-agent/general"), {
        clientTools: new Set(),
        includeUsage: false,
        onEnd: async () => {},
        onBreak: (error) => broken.push(error),
      }),
    );
    const events = (await new Response(stream).text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(JSON.parse(events.at(-2)?.slice("data: ".length) ?? "null")).toMatchObject({
      error: { code: "internal_error", message: BROKE_OFF },
    });
    expect(broken).toHaveLength(1);
  });

  it("leaves a turn that waits for approval waiting after a restart: nothing of it runs again", async () => {
    const write = { name: "workspace_write_file", arguments: '{"path":"a.txt","content":"x"}' };
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const id = await createSession("workspace");
    const { status } = await call("POST", `/context/sessions/${id}/messages`, { content: `write ${script.marker}` });
    expect(status).toBe(200);
    await restartObject(id);

    await wakeByAlarm(id);
    const session = await getSession(id);
    expect(session.status).toBe("awaiting_approval");
    expect(session.pendingToolCalls.map((c) => c.name)).toEqual(["workspace_write_file"]);
    expect((await script.requests()).length).toBe(1);
  });

  it("resumes a turn of the OpenAI door with the client's own tools", async () => {
    const weather = {
      type: "function",
      function: { name: "get_weather", description: "The weather in a city.", parameters: { type: "object" } },
    };
    const script = await scriptUpstream([
      { type: "hang" },
      { type: "completion", toolCalls: [{ name: "get_weather", arguments: '{"city":"Paris"}' }] },
    ]);
    const listed = async () => {
      const { json } = await call("GET", "/context/sessions");
      return (json as { sessions: { sessionId: string; status: string }[] }).sessions;
    };
    // The sessions of earlier tests, some of which their list may still show as running.
    const earlier = new Set((await listed()).map((s) => s.sessionId));
    void exports.default
      .fetch("http://aptix.test/agent/v1/chat/completions", {
        method: "POST",
        headers: { ...authHeaders(TEST_KEYS.chat.key), "content-type": "application/json" },
        body: JSON.stringify({
          model: "aptix-agent/general",
          tools: [weather],
          messages: [{ role: "user", content: `weather? ${script.marker}` }],
        }),
      })
      .catch(() => undefined);
    await requestsMade(script, 1);
    // The door's session: the new one, as its owner's list shows it once its turn runs.
    const running = async () =>
      (await listed()).find((s) => s.status === "running" && !earlier.has(s.sessionId))?.sessionId ?? "";
    const id = await until(running, (found) => found !== "", "the door's session in the list");
    await restartObject(id);

    await wakeByAlarm(id);
    const session = await idle(id);
    expect(session.status).toBe("awaiting_client");
    expect(session.pendingToolCalls.map((c) => c.name)).toEqual(["get_weather"]);
    const [first, again] = await script.bodies();
    const names = (body: Record<string, unknown> | undefined) =>
      ((body?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name).sort();
    expect(names(again)).toEqual(names(first));
    expect(names(again)).toContain("get_weather");
  });

  it("ends a turn stored without its caller (by code before resumption) as turn_interrupted, unmetered calls never made", async () => {
    const script = await scriptUpstream([{ type: "hang" }, { type: "completion", content: "never asked" }]);
    const id = await createSession();
    await startTurn(id, `think ${script.marker}`);
    await requestsMade(script, 1);
    await restartObject(id);
    await runInDurableObject(stubOf(id), (_instance, state) => {
      state.storage.sql.exec("UPDATE session SET turn_json = json_remove(turn_json, '$.caller') WHERE id = 1");
    });
    await restartObject(id);

    await wakeByAlarm(id);
    const session = await idle(id);
    expect(session.turns.at(-1)?.error?.code).toBe("turn_interrupted");
    expect((await script.requests()).length).toBe(1);
  });

  it("ends the turn as turn_interrupted once it has resumed AGENT_MAX_RESUMES times", async () => {
    const { maxResumes } = settings(env).resume;
    const script = await scriptUpstream(Array.from({ length: maxResumes + 1 }, () => ({ type: "hang" as const })));
    const id = await createSession();
    await startTurn(id, `think ${script.marker}`);
    for (let made = 1; made <= maxResumes + 1; made++) {
      await requestsMade(script, made);
      await restartObject(id);
      // The alarm's handler waits for the resumed turn, which hangs again: not awaited.
      if (made <= maxResumes) void wakeByAlarm(id).catch(() => undefined);
    }
    await wakeByAlarm(id);
    const session = await idle(id);
    expect(session.turns.at(-1)?.error).toEqual({
      code: "turn_interrupted",
      message: `The turn was interrupted when the session restarted, after it had resumed ${maxResumes} times; send the message again.`,
    });
    expect((await script.requests()).length).toBe(maxResumes + 1);
  });
});

const slowCalls = async (key: string) =>
  ((await (await fetch(`${env.TEST_MCP_CONTROL_URL}/odd/calls/${key}`)).json()) as { count: number }).count;

for (const toolFormat of ["native", "json"] as const) {
  describe(`a tool call cut off by a restart (${toolFormat} tool format)`, () => {
    /** A mode on a route of this format, with the odd MCP server's slow tools; the slow call's name. */
    async function slowSetup(tool: "slow-read" | "slow-write") {
      const server = await registerServer({ url: oddUrl(), tools: ["slow-read", "slow-write"] });
      const mode = await modeOnRoute(await toUpstreamA({ toolFormat }), [`mcp:${server}`]);
      return { mode, name: mcpToolName(server, tool) };
    }

    /** The model's step that calls `name` with `args`, in this route's format. */
    function callStep(name: string, args: object) {
      const argumentsJson = JSON.stringify(args);
      return toolFormat === "native"
        ? { type: "completion" as const, toolCalls: [{ id: "call_slow", name, arguments: argumentsJson }] }
        : {
            type: "completion" as const,
            content: JSON.stringify({ tool: name, parameters: args, terminate: false }),
          };
    }

    /** What the model was told of the call, in its next request (a tool message, or a JSON-format result). */
    async function resultSent(script: UpstreamScript, index: number): Promise<string> {
      const messages = await script.messagesOf(index);
      return messages.at(-1)?.content ?? "";
    }

    /** A turn whose call of `tool` the object is stopped in, then woken; the session once the turn stopped. */
    async function cutOffMidCall(tool: "slow-read" | "slow-write", answer: string) {
      const { mode, name } = await slowSetup(tool);
      const key = uniqueName(tool);
      const script = await scriptUpstream([
        callStep(name, { key, ms: 60_000 }),
        { type: "completion", content: answer },
      ]);
      const id = await createSession(mode);
      await startTurn(id, `${tool} ${script.marker}`);
      await until(
        () => slowCalls(key),
        (n) => n === 1,
        "the tool to start",
      );
      await restartObject(id);
      await wakeByAlarm(id);
      return { session: await idle(id), key, script };
    }

    it("runs a call of a tool that only reads again, and the turn completes with its result", async () => {
      const { session, key, script } = await cutOffMidCall("slow-read", "Done.");
      expect(session.turns.map((t) => t.status)).toEqual(["completed"]);
      expect(await slowCalls(key)).toBe(2);
      expect(await resultSent(script, 1)).toContain(`read ${key}`);
    });

    it("never runs a call of a tool that writes twice: the model is told it was interrupted", async () => {
      const { session, key, script } = await cutOffMidCall("slow-write", "It may not have been written.");
      expect(session.turns.map((t) => t.status)).toEqual(["completed"]);
      expect(await slowCalls(key)).toBe(1);
      expect(session.conversation.at(-1)?.content).toBe("It may not have been written.");
      expect(await resultSent(script, 1)).toContain(INTERRUPTED_CALL);
    });
  });
}

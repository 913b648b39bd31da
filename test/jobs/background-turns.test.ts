// `Prefer: respond-async`: a turn admitted and stored, answered 202 with where to poll it, that runs on in its
// session object: to completion, through a pause for approval (resumed by an approval sent the same way), and past
// a restart of the object; the session's turns listed by status; the same 404 as every session route to anyone but
// its owner and an admin of its org.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TurnAccepted, TurnPage, TurnStatus } from "../../src/wire/turn";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, sendMessage } from "../fixtures/sessions";
import { openSocket } from "../fixtures/socket";
import { scriptUpstream } from "../fixtures/upstream";

const stubOf = (id: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
const write = { name: "workspace_write_file", arguments: JSON.stringify({ path: "a.txt", content: "A" }) };

/** POST `path` with `body` and `Prefer: respond-async`, as `key`. */
function preferAsync(path: string, body: unknown, key: string = TEST_KEYS.chat.key): Promise<Response> {
  return exports.default.fetch(`http://aptix.test${path}`, {
    method: "POST",
    headers: { ...authHeaders(key), "content-type": "application/json", prefer: "respond-async, wait=0" },
    body: JSON.stringify(body),
  });
}

async function accepted(response: Response): Promise<TurnAccepted> {
  if (response.status !== 202) throw new Error(`not accepted (${response.status}): ${await response.text()}`);
  return TurnAccepted.parse(await response.json());
}

async function turnAt(location: string, key: string = TEST_KEYS.chat.key): Promise<TurnStatus> {
  const { status, json } = await call("GET", location, undefined, key);
  if (status !== 200) throw new Error(`turn not readable (${status}): ${JSON.stringify(json)}`);
  return TurnStatus.parse(json);
}

/** Polls the turn until it is no longer running (a turn that stays running fails the test at its timeout). */
async function polled(location: string): Promise<TurnStatus> {
  for (;;) {
    const turn = await turnAt(location);
    if (turn.status !== "running") return turn;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const locationOf = (turn: TurnAccepted) => `/context/sessions/${turn.sessionId}/turns/${turn.turnId}`;

describe("a background turn", () => {
  it("is answered 202 with Location and Preference-Applied, and polled to completion with its answer", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Done while you were away." }]);
    const id = await createSession();
    const response = await preferAsync(`/context/sessions/${id}/messages`, { content: `work ${script.marker}` });
    const turn = await accepted(response);
    expect(turn).toEqual({ sessionId: id, turnId: expect.any(String), status: "running" });
    expect(response.headers.get("location")).toBe(locationOf(turn));
    expect(response.headers.get("preference-applied")).toBe("respond-async");
    const done = await polled(locationOf(turn));
    expect(done).toMatchObject({
      status: "completed",
      answer: "Done while you were away.",
      pending: null,
      error: null,
    });
    expect(done.endedAt).not.toBeNull();
  });

  it("pauses for approval with its pending calls, and is resumed by an approval and a result sent in the background", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "Writing.", toolCalls: [write] },
      { type: "completion", content: "Written." },
    ]);
    const id = await createSession("workspace");
    const turn = await accepted(
      await preferAsync(`/context/sessions/${id}/messages`, { content: `w ${script.marker}` }),
    );
    const paused = await polled(locationOf(turn));
    expect(paused.status).toBe("paused");
    expect(paused.pending?.approvals.map((c) => [c.name, c.approval])).toEqual([["workspace_write_file", "pending"]]);
    expect(paused.pending?.clientCalls).toEqual([]);
    const decisions = [{ toolCallId: paused.pending?.approvals[0]?.id ?? "", approved: true }];
    const resumed = await accepted(await preferAsync(`/context/sessions/${id}/approvals`, { decisions }));
    expect(resumed.turnId).toBe(turn.turnId);
    // The approved write is the client's to make: the turn pauses again, for its result.
    const handedOver = await polled(locationOf(resumed));
    expect(handedOver.pending?.clientCalls.map((c) => [c.name, c.approval])).toEqual([
      ["workspace_write_file", "approved"],
    ]);
    const results = [{ toolCallId: decisions[0]?.toolCallId ?? "", resultJson: '{"path":"a.txt","bytesWritten":1}' }];
    const done = await polled(
      locationOf(await accepted(await preferAsync(`/context/sessions/${id}/tool-results`, { results }))),
    );
    expect([done.status, done.answer]).toEqual(["completed", "Written."]);
  });

  it("resumes after its session's object restarts mid model call, and completes", async () => {
    const script = await scriptUpstream([{ type: "hang" }, { type: "completion", content: "Back again." }]);
    const id = await createSession();
    const turn = await accepted(await preferAsync(`/context/sessions/${id}/messages`, { content: script.marker }));
    while ((await script.requests()).length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    // Stopped as the platform stops an object: memory gone, storage (the running turn) and alarm kept.
    await runInDurableObject(stubOf(id), (_instance, state) => state.abort("restarted by the test")).catch(
      () => undefined,
    );
    await runDurableObjectAlarm(stubOf(id));
    const done = await polled(locationOf(turn));
    expect([done.status, done.answer]).toEqual(["completed", "Back again."]);
  });

  it("is seen live on the session's WebSocket, from turn_started to turn_completed", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Live." }]);
    const id = await createSession();
    const socket = await openSocket(id);
    const turn = await accepted(await preferAsync(`/context/sessions/${id}/messages`, { content: script.marker }));
    const started = await socket.waitForType("turn_started");
    const completed = await socket.waitForType("turn_completed");
    socket.close();
    expect([started.turnId, completed.turnId]).toEqual([turn.turnId, turn.turnId]);
    expect(completed.response).toMatchObject({ status: "completed", text: "Live." });
  });

  it("is refused as every door's turn is, storing nothing: a busy session answers 409 and no turn", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const id = await createSession("workspace");
    await sendMessage(id, `w ${script.marker}`);
    const refused = await preferAsync(`/context/sessions/${id}/messages`, { content: "another" });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("session_awaiting_input");
    const page = TurnPage.parse((await call("GET", `/context/sessions/${id}/turns`)).json);
    expect(page.turns.map((t) => t.status)).toEqual(["paused"]);
  });

  it("refuses a client's result that breaks its tool's shape with 400, as the synchronous route does", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "workspace_read_file", arguments: '{"path":"a.md"}' }] },
    ]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `read ${script.marker}`);
    const results = [{ toolCallId: paused.toolCalls[0]?.id ?? "", resultJson: '{"nope":1}' }];
    const refused = await preferAsync(`/context/sessions/${id}/tool-results`, { results });
    expect([paused.status, refused.status]).toEqual(["awaiting_client", 400]);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("invalid_tool_result");
  });
});

describe("a session's turns", () => {
  it("are listed newest first, filtered by status, a page at a time", async () => {
    const script = await scriptUpstream([
      { type: "completion", content: "one" },
      { type: "completion", content: "two" },
      { type: "completion", content: "three" },
    ]);
    const id = await createSession();
    for (const word of ["1", "2", "3"]) await sendMessage(id, `${word} ${script.marker}`);
    const list = async (query: string) =>
      TurnPage.parse((await call("GET", `/context/sessions/${id}/turns${query}`)).json);
    const first = await list("?status=completed&limit=2");
    expect([first.turns.map((t) => t.answer), first.hasMore]).toEqual([["three", "two"], true]);
    const next = await list(`?status=completed&limit=2&before=${first.turns.at(-1)?.turnId}`);
    expect([next.turns.map((t) => t.answer), next.hasMore]).toEqual([["one"], false]);
    expect((await list("?status=failed")).turns).toEqual([]);
    const bad = await call("GET", `/context/sessions/${id}/turns?status=finished`);
    expect([bad.status, (bad.json as ErrorBody).error.param]).toEqual([400, "status"]);
  });

  it("answer 404 to another member and to another org, for a turn and for the list", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "mine" }]);
    const id = await createSession();
    const turn = await accepted(await preferAsync(`/context/sessions/${id}/messages`, { content: script.marker }));
    for (const key of [TEST_KEYS.otherMember.key, TEST_KEYS.otherOrg.key]) {
      const one = await call("GET", locationOf(turn), undefined, key);
      const all = await call("GET", `/context/sessions/${id}/turns`, undefined, key);
      expect([one.status, all.status]).toEqual([404, 404]);
      expect((one.json as ErrorBody).error.code).toBe("session_not_found");
    }
    expect((await polled(locationOf(turn))).status).toBe("completed");
    expect((await turnAt(locationOf(turn), TEST_KEYS.admin.key)).answer).toBe("mine");
  });

  it("answer 404 turn_not_found for a turn the session never had", async () => {
    const id = await createSession();
    const { status, json } = await call("GET", `/context/sessions/${id}/turns/no-such-turn`);
    expect([status, (json as ErrorBody).error.code]).toEqual([404, "turn_not_found"]);
  });
});

// The session object's background RPC (startTurn, turnStatus, listTurns), called as the schedules and A2A doors
// call it: the turn is answered with its id once stored, runs on in the object, and its status is read back.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Caller } from "../../src/session/caller";
import { TurnStatus } from "../../src/wire/turn";
import { TEST_KEYS } from "../fixtures/keys";
import { createSession } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const stubOf = (id: string) => env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
const bob: Caller = { org: TEST_KEYS.chat.org, user: TEST_KEYS.chat.user, keyId: "chat" };

async function settled(id: string, turnId: string): Promise<TurnStatus> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const outcome = await stubOf(id).turnStatus(bob, turnId);
    if (!outcome.ok) throw new Error(outcome.message);
    const status = TurnStatus.parse(outcome.value);
    if (status.status !== "running") return status;
    if (Date.now() > deadline) throw new Error(`turn ${turnId} still running`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the session object's background RPC", () => {
  it("answers startTurn with the running turn's id and completes it on its own", async () => {
    const script = await scriptUpstream([{ type: "completion", content: "Done in the background." }]);
    const id = await createSession();
    const started = await stubOf(id).startTurn(bob, { kind: "message", content: `work ${script.marker}` });
    if (!started.ok) throw new Error(started.message);
    expect(started.value).toEqual({ sessionId: id, turnId: expect.any(String), status: "running" });
    const done = await settled(id, started.value.turnId);
    expect([done.status, done.answer, done.endedAt !== null]).toEqual(["completed", "Done in the background.", true]);
    const listed = await stubOf(id).listTurns(bob, { status: "completed" });
    expect(listed.ok && listed.value.turns.map((t) => t.turnId)).toEqual([started.value.turnId]);
  });
});

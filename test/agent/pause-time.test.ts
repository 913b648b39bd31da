// Waiting for a person is not working time: the turn timeout counts only the loop's own work, and a paused
// turn has its own expiry (AGENT_PAUSE_TTL_MS), after which its pending calls expire unexecuted.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expirePausedTurn } from "../../src/agent/turn-status";
import { TurnState } from "../../src/agent/turn-store";
import type { Outcome } from "../../src/refusal";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { expirePauseNow, inSessionObject } from "../fixtures/in-object";
import { approve, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const write = { name: "workspace_write_file", arguments: JSON.stringify({ path: "notes.txt", content: "hello" }) };
const value = (outcome: Outcome<AgentExecuteResponse>) => {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.value;
};

describe("pauses and working time", () => {
  it("completes a turn whose approval and client result arrive after the turn timeout has passed", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write] },
      { type: "completion", content: "Wrote notes.txt." },
    ]);
    // Each pause alone outlasts the limit; the three runs' working time stays well under it on a loaded machine (a
    // limit of 0.4 s was once passed by the runs alone while the type check ran beside the suite).
    const outcome = await inSessionObject(
      { turnTimeoutMs: 1_500 },
      async ({ reasoner }) => {
        const paused = value(await reasoner.startTurn(`write notes.txt with hello ${script.marker}`));
        await sleep(1_600);
        const approved = value(
          await reasoner.applyApprovals([{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: true }]),
        );
        await sleep(1_600);
        const resultJson = JSON.stringify({ path: "notes.txt", bytesWritten: 5 });
        return value(await reasoner.applyToolResults([{ toolCallId: approved.toolCalls[0]?.id ?? "", resultJson }]));
      },
      { mode: "workspace" },
    );
    expect([outcome.status, outcome.text, outcome.error]).toEqual(["completed", "Wrote notes.txt.", undefined]);
  });

  it("keeps the working time of the runs before a pause and stops the turn when their sum passes the limit", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write], delayFirstByteMs: 600 },
      { type: "completion", content: "never sent", delayFirstByteMs: 1_600 },
    ]);
    // The first run alone stays under the limit with room for a loaded machine (0.6 s of 2 s: with 1 s, a run's start
    // beside the whole suite once took the rest); the two pass it.
    const outcome = await inSessionObject(
      { turnTimeoutMs: 2_000 },
      async ({ reasoner }) => {
        const paused = value(await reasoner.startTurn(`write ${script.marker}`));
        const approved = value(
          await reasoner.applyApprovals([{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: true }]),
        );
        const resultJson = JSON.stringify({ path: "notes.txt", bytesWritten: 5 });
        return value(await reasoner.applyToolResults([{ toolCallId: approved.toolCalls[0]?.id ?? "", resultJson }]));
      },
      { mode: "workspace" },
    );
    expect(outcome.status).toBe("failed");
    expect(outcome.error?.code).toBe("turn_timeout");
    expect(outcome.error?.message).toMatch(
      /^The turn stopped at the time limit: it worked 2(\.\d)? s without a final answer \(the limit is 2 s of working time/,
    );
  });

  it("expires a paused turn after its pause TTL: pending calls unexecuted, pause_expired, a new message accepted", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [write] },
      { type: "completion", content: "Hello again." },
    ]);
    const { expired, call, status, next } = await inSessionObject(
      { pauseTtlMs: 100 },
      async ({ reasoner, ending, store }) => {
        value(await reasoner.startTurn(`write ${script.marker}`));
        await sleep(150);
        const expired = expirePausedTurn(ending);
        const call = store.toolCalls(store.messages()[0]?.turnId ?? "")[0];
        const status = store.status();
        const next = value(await reasoner.startTurn(`hi ${script.marker}`));
        return { expired, call, status, next };
      },
      { mode: "workspace" },
    );
    expect(expired?.status).toBe("failed");
    expect(expired?.error).toEqual({
      code: "pause_expired",
      message:
        "The turn waited 0.1 s for approvals or client results and expired; its pending tool calls were not executed.",
    });
    expect([call?.state, call?.approval, call?.errorMessage]).toEqual([
      "settled",
      "pending",
      "The turn ended (pause_expired) before this call was settled.",
    ]);
    expect(status).toBe("idle");
    expect(next.text).toBe("Hello again.");
  });

  it("does not expire a paused turn before its pause TTL", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const { expired, status } = await inSessionObject(
      { pauseTtlMs: 60_000 },
      async ({ reasoner, ending, store }) => {
        value(await reasoner.startTurn(`write ${script.marker}`));
        return { expired: expirePausedTurn(ending), status: store.status() };
      },
      { mode: "workspace" },
    );
    expect([expired, status]).toEqual([null, "awaiting_approval"]);
  });

  it("refuses an approval that arrives after the pause expired with pause_expired, executing nothing", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write notes.txt ${script.marker}`);
    await expirePauseNow(id);
    const late = await approve(id, [{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: true }]);
    expect(late.status).toBe(409);
    expect((late.json as ErrorBody).error.code).toBe("pause_expired");
    const session = await getSession(id);
    expect(session.status).toBe("idle");
    expect(session.turns.map((t) => t.error?.code)).toEqual(["pause_expired"]);
    expect(session.pendingToolCalls).toEqual([]);
    expect((await script.requests()).length).toBe(1);
  });

  it("sets an alarm at the pause's expiry, and the alarm ends the expired turn", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write] }]);
    const id = await createSession("workspace");
    await sendMessage(id, `write notes.txt ${script.marker}`);
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id));
    const scheduled = await runInDurableObject(stub, async (instance, state) => {
      // Until the turn's usage row is written (the list write), the alarm set as the turn started stands by for it.
      await instance.list.settled();
      const row = state.storage.sql.exec<{ turn_json: string }>("SELECT turn_json FROM session").one();
      return {
        alarm: await state.storage.getAlarm(),
        expiresAt: TurnState.parse(JSON.parse(row.turn_json)).pauseExpiresAt,
      };
    });
    expect(scheduled.alarm).toBe(scheduled.expiresAt);
    expect((scheduled.alarm ?? 0) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    await expirePauseNow(id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const session = await getSession(id);
    expect([session.status, session.turns[0]?.error?.code]).toEqual(["idle", "pause_expired"]);
  });
});

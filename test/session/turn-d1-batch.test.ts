// A warm session's turn costs D1 one batch and no read of its own (issue 46): the session's list entry, the search
// feed, the turn's usage rows and the check of whether any endpoint hears its stop event ride one batch, written by
// the object just after the turn; the Worker's reads (key, org, mode, routes) come from the isolate's copies.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/session/agent-session";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { type D1Call, reads, spyOnD1 } from "../fixtures/d1-spy";
import { createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream, type UpstreamScript } from "../fixtures/upstream";

const inObject = <T>(id: string, work: (instance: AgentSession, state: DurableObjectState) => T | Promise<T>) =>
  runInDurableObject(env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(id)), work);

/** The webhook queue's consumer runs in the same isolate, after the turn and off its path: its reads are its own. */
const ofTheTurn = (calls: D1Call[]) => calls.filter((call) => !call.sql.every((sql) => /\bwebhook_/.test(sql)));

const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

/** A session that has had two turns (its object awake, the isolate's copies read), and its script for a third. */
async function warmSession(): Promise<{ id: string; script: UpstreamScript }> {
  const script = await scriptUpstream([
    { type: "completion", content: "One.", usage },
    { type: "completion", content: "Two.", usage },
    { type: "completion", content: "Three.", usage },
  ]);
  const id = await createSession();
  for (const word of ["one", "two"]) {
    await sendMessage(id, `${word} ${script.marker}`);
    await inObject(id, (instance) => instance.list.settled());
  }
  return { id, script };
}

/** A third turn, and the D1 calls it made until its list write was done. */
async function warmTurn(
  id: string,
  script: UpstreamScript,
): Promise<{ answer: AgentExecuteResponse; calls: D1Call[] }> {
  const { result, calls } = await spyOnD1(async () => {
    const answer = await sendMessage(id, `three ${script.marker}`);
    await inObject(id, (instance) => instance.list.settled());
    return answer;
  });
  return { answer: result, calls: ofTheTurn(calls) };
}

interface WarmTurn {
  id: string;
  script: UpstreamScript;
  answer: AgentExecuteResponse;
  calls: D1Call[];
}

describe("a warm session's turn in D1", () => {
  // One warm session's third turn, recorded once; each test reads its own part of it.
  let turn: WarmTurn;
  beforeAll(async () => {
    const { id, script } = await warmSession();
    turn = { id, script, ...(await warmTurn(id, script)) };
  });

  it("makes one D1 call, a batch whose one read asks whether an endpoint hears the turn's stop", () => {
    const [batch, ...more] = turn.calls;
    const readsOf = (batch?.sql ?? []).filter((sql) => reads({ kind: "batch", sql: [sql], params: [] }));
    expect([batch?.kind, more.length]).toEqual(["batch", 0]);
    expect(readsOf.map((sql) => /^SELECT EXISTS \( SELECT 1 FROM (\w+)/.exec(sql)?.[1])).toEqual(["webhook_endpoints"]);
  });

  it("leaves no alarm set once its usage row is written (the alarm only stood by for a stopped object)", async () => {
    expect(await inObject(turn.id, (_instance, state) => state.storage.getAlarm())).toBeNull();
  });

  it("writes its usage row in the batch of the list entry, which shows the turn just ended", async () => {
    const { id, script, answer, calls } = turn;
    const [batch] = calls;
    const tables = (batch?.sql ?? []).map(
      (sql) => /^(?:UPDATE|INSERT(?: OR IGNORE)? INTO|SELECT EXISTS \( SELECT 1 FROM) (\w+)/.exec(sql)?.[1],
    );
    expect(tables).toEqual(["session_index", "message_index", "usage_records", "webhook_endpoints"]);

    const object = await inObject(id, (instance, state) => ({
      seq: Number(state.storage.sql.exec("SELECT MAX(seq) AS seq FROM events").one().seq),
      turn: instance.store.turns().at(-1),
    }));
    const turnId = object.turn?.turnId ?? "";
    const row = await env.DB.prepare(
      "SELECT turn_id, endpoint, total_tokens FROM usage_records WHERE session_id = ? AND turn_id = ?",
    )
      .bind(id, turnId)
      .all();
    const entry = await env.DB.prepare(
      "SELECT status, title, updated_at, index_seq FROM session_index WHERE session_id = ?",
    )
      .bind(id)
      .first<{ status: string; title: string; updated_at: string; index_seq: number }>();
    expect([answer.text, row.results]).toEqual(["Three.", [{ turn_id: turnId, endpoint: "agent", total_tokens: 17 }]]);
    expect({ status: entry?.status, title: entry?.title, seq: entry?.index_seq }).toEqual({
      status: "idle",
      title: `one ${script.marker}`,
      seq: object.seq,
    });
    expect((entry?.updated_at ?? "") >= (object.turn?.endedAt ?? "~")).toBe(true);
  });
});

// GET /context/sessions/:id/turns/:turnId/timeline: a turn's steps as its session object recorded them, on the
// turn's time axis, for callers of the session's org; another org's session and a turn the session never had are
// refused. The steps here are written through the object's own TurnSteps, as the loop writes them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TimelineStep } from "../../src/observability/turn-observer";
import type { AgentSession } from "../../src/session/agent-session";
import { TurnTimeline } from "../../src/wire/timeline";
import type { TurnRecord } from "../../src/wire/turn";
import { TEST_KEYS } from "../fixtures/keys";
import { call, createSession, type ErrorBody, getSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const T0 = Date.parse("2026-11-26T04:00:00.000Z");
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

const ended: TurnRecord = {
  turnId: "turn-past",
  status: "completed",
  startedAt: new Date(T0).toISOString(),
  endedAt: new Date(T0 + 2_000).toISOString(),
  iterations: 2,
  error: null,
};

const STEPS: TimelineStep[] = [
  { kind: "run", name: "start", startedAt: T0, endedAt: T0 + 1_990, outcome: "completed", iterations: 2 },
  {
    kind: "model_call",
    name: "gpt-4o-mini",
    startedAt: T0 + 10,
    endedAt: T0 + 910,
    route: "default",
    provider: "openai_compatible",
    model: "gpt-4o-mini",
    ttftMs: 300,
    inputTokens: 800,
    outputTokens: 40,
    traceId: TRACE,
  },
  {
    kind: "tool_call",
    name: "agent_hello_world",
    startedAt: T0 + 920,
    endedAt: T0 + 950,
    ranOn: "server",
    traceId: TRACE,
  },
  { kind: "failover", name: "local → default", startedAt: T0 + 960, endedAt: T0 + 960, traceId: "second-trace" },
];

/** Writes in the session's object what `write` writes with its store and steps (as the loop would). */
async function inSession(sessionId: string, write: (session: AgentSession) => void): Promise<void> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.idFromString(sessionId));
  await runInDurableObject(stub, (instance: AgentSession) => write(instance));
}

/** A session with an ended turn `turn-past` (and `steps` recorded for it). */
async function sessionWithTurn(steps: TimelineStep[]): Promise<string> {
  const sessionId = await createSession();
  await inSession(sessionId, (session) => {
    session.store.recordTurnOutcome(ended);
    for (const step of steps) session.steps.add(ended.turnId, step);
  });
  return sessionId;
}

async function timeline(sessionId: string, turnId: string, key?: string) {
  return call("GET", `/context/sessions/${sessionId}/turns/${encodeURIComponent(turnId)}/timeline`, undefined, key);
}

describe("GET /context/sessions/:id/turns/:turnId/timeline", () => {
  it("answers the session's caller the turn's steps with their offsets and durations", async () => {
    const sessionId = await sessionWithTurn(STEPS);
    const { status, json } = await timeline(sessionId, ended.turnId);
    expect(status).toBe(200);
    const body = TurnTimeline.parse(json);
    expect({ ...body, steps: undefined }).toEqual({
      object: "turn.timeline",
      sessionId,
      turnId: "turn-past",
      status: "completed",
      startedAt: ended.startedAt,
      endedAt: ended.endedAt,
      durationMs: 2_000,
      traceIds: [TRACE, "second-trace"],
      steps: undefined,
    });
    expect(body.steps.map((s) => [s.kind, s.name, s.offsetMs, s.durationMs])).toEqual([
      ["run", "start", 0, 1_990],
      ["model_call", "gpt-4o-mini", 10, 900],
      ["tool_call", "agent_hello_world", 920, 30],
      ["failover", "local → default", 960, 0],
    ]);
  });

  it("answers each step's own fields, its times as ISO strings", async () => {
    const sessionId = await sessionWithTurn(STEPS);
    const body = TurnTimeline.parse((await timeline(sessionId, ended.turnId)).json);
    expect(body.steps[1]).toEqual({
      kind: "model_call",
      name: "gpt-4o-mini",
      route: "default",
      provider: "openai_compatible",
      model: "gpt-4o-mini",
      ttftMs: 300,
      inputTokens: 800,
      outputTokens: 40,
      traceId: TRACE,
      startedAt: new Date(T0 + 10).toISOString(),
      endedAt: new Date(T0 + 910).toISOString(),
      offsetMs: 10,
      durationMs: 900,
    });
  });

  it("widens the axis to a step that started before the turn's start was written", async () => {
    const early: TimelineStep = { kind: "run", name: "start", startedAt: T0 - 4, endedAt: T0 + 1_990 };
    const sessionId = await sessionWithTurn([early]);
    const body = TurnTimeline.parse((await timeline(sessionId, ended.turnId)).json);
    expect([body.startedAt, body.durationMs, body.steps[0]?.offsetMs]).toEqual([
      new Date(T0 - 4).toISOString(),
      2_004,
      0,
    ]);
  });

  it("answers a turn that ran before the timeline was kept with no steps", async () => {
    const sessionId = await sessionWithTurn([]);
    const body = TurnTimeline.parse((await timeline(sessionId, ended.turnId)).json);
    expect([body.status, body.steps, body.traceIds, body.durationMs]).toEqual(["completed", [], [], 2_000]);
  });

  it("refuses another org's caller as for a session that does not exist", async () => {
    const sessionId = await sessionWithTurn(STEPS);
    const { status, json } = await timeline(sessionId, ended.turnId, TEST_KEYS.otherOrg.key);
    expect([status, (json as ErrorBody).error.code]).toEqual([404, "session_not_found"]);
  });

  it("refuses a turn the session never had with turn_not_found, naming the turn", async () => {
    const sessionId = await sessionWithTurn(STEPS);
    const { status, json } = await timeline(sessionId, "turn-elsewhere");
    const { error } = json as ErrorBody;
    expect([status, error.code, error.type]).toEqual([404, "turn_not_found", "not_found_error"]);
    expect(error.message).toContain("turn-elsewhere");
  });

  it("answers an open turn waiting for approval with its status and no end", async () => {
    const script = await scriptUpstream([
      {
        type: "completion",
        toolCalls: [{ name: "workspace_write_file", arguments: JSON.stringify({ path: "a.txt", content: "A" }) }],
      },
    ]);
    const sessionId = await createSession("workspace");
    await sendMessage(sessionId, `write ${script.marker}`);
    const turnId = (await getSession(sessionId)).conversation.at(-1)?.turnId ?? "";
    const body = TurnTimeline.parse((await timeline(sessionId, turnId)).json);
    expect([body.status, body.endedAt]).toEqual(["awaiting_approval", null]);
    expect(body.durationMs).toBeGreaterThanOrEqual(0);
  });

  // Needs the loop to record its steps (the observer wired to AgentSession.steps): a real turn's timeline holds
  // its model call, with the route that answered and the tokens it used.
  it("records a real turn's model call, with its route and tokens", async () => {
    const usage = { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 };
    const script = await scriptUpstream([{ type: "completion", content: "Hello.", usage }]);
    const sessionId = await createSession();
    await sendMessage(sessionId, `hello ${script.marker}`);
    const turnId = (await getSession(sessionId)).turns.at(-1)?.turnId ?? "";
    const body = TurnTimeline.parse((await timeline(sessionId, turnId)).json);
    const modelCall = body.steps.find((s) => s.kind === "model_call");
    expect([body.status, modelCall?.route, modelCall?.inputTokens, modelCall?.outputTokens]).toEqual([
      "completed",
      "default",
      12,
      4,
    ]);
  });
});

// The turn timeline's storage: the steps the loop tells of are written to the session object's SQLite and read
// back a turn at a time, as they were given, in the order they started.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TimelineStep } from "../../src/observability/turn-observer";
import type { AgentSession } from "../../src/session/agent-session";
import { CorruptSessionRowError } from "../../src/session/session-rows";
import type { TurnSteps } from "../../src/session/turn-steps";

const T0 = Date.parse("2026-11-26T04:00:00.000Z");

const modelCall: TimelineStep = {
  kind: "model_call",
  name: "gpt-4o-mini",
  startedAt: T0 + 5,
  endedAt: T0 + 905,
  route: "default",
  provider: "openai_compatible",
  model: "gpt-4o-mini",
  ttftMs: 310,
  inputTokens: 812,
  outputTokens: 40,
  finishReason: "tool_calls",
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
};
const toolCall: TimelineStep = {
  kind: "tool_call",
  name: "workspace_read_file",
  startedAt: T0 + 910,
  endedAt: T0 + 1_400,
  toolCallId: "call_1",
  ranOn: "client",
};
const run: TimelineStep = { kind: "run", name: "start", startedAt: T0, endedAt: T0 + 2_000, outcome: "completed" };

/** Runs `body` with the steps of a new session object (its own TurnSteps, on its own storage). */
function inObject<R>(body: (steps: TurnSteps, sql: SqlStorage) => R): Promise<R> {
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  return runInDurableObject(stub, (instance: AgentSession, state) => body(instance.steps, state.storage.sql));
}

describe("TurnSteps", () => {
  it("reads a turn's steps back as they were written, every field", async () => {
    const read = await inObject((steps) => {
      steps.add("turn-1", modelCall);
      return steps.forTurn("turn-1");
    });
    expect(read).toEqual([modelCall]);
  });

  it("orders a turn's steps by when they started, whatever order they were written in", async () => {
    const names = await inObject((steps) => {
      // A run is written when it ends, after the calls it made.
      steps.add("turn-1", toolCall);
      steps.add("turn-1", modelCall);
      steps.add("turn-1", run);
      return steps.forTurn("turn-1").map((s) => s.kind);
    });
    expect(names).toEqual(["run", "model_call", "tool_call"]);
  });

  it("keeps two steps that started in the same millisecond in the order they were written", async () => {
    const names = await inObject((steps) => {
      steps.add("turn-1", { kind: "failover", name: "local → default", startedAt: T0, endedAt: T0 });
      steps.add("turn-1", { ...modelCall, startedAt: T0 });
      return steps.forTurn("turn-1").map((s) => s.kind);
    });
    expect(names).toEqual(["failover", "model_call"]);
  });

  it("reads only the asked turn's steps", async () => {
    const read = await inObject((steps) => {
      steps.add("turn-1", modelCall);
      steps.add("turn-2", toolCall);
      return [steps.forTurn("turn-1"), steps.forTurn("turn-2"), steps.forTurn("turn-3")];
    });
    expect(read).toEqual([[modelCall], [toolCall], []]);
  });

  it("refuses a stored step that is not a step, naming it", async () => {
    const problem = await inObject((steps, sql) => {
      sql.exec(
        "INSERT INTO turn_steps (turn_id, kind, started_at, step_json) VALUES ('turn-1', 'model_call', 1, ?)",
        JSON.stringify({ kind: "nap", name: "x", startedAt: 1, endedAt: 2 }),
      );
      try {
        steps.forTurn("turn-1");
        return null;
      } catch (error) {
        return error instanceof CorruptSessionRowError ? error.message : String(error);
      }
    });
    expect(problem).toMatch(/^A stored turn step is corrupt: kind /);
  });
});

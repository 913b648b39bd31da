// A turn stopped by a limit writes a warning with the session id and the figure (the design document:
// "Log warning and force-terminate").
import { describe, expect, it } from "vitest";
import { inSessionObject, type TestConfig } from "../fixtures/in-object";
import { scriptUpstream } from "../fixtures/upstream";
import type { ScriptStep } from "../upstream/script-types";

async function warningOf(steps: ScriptStep[], config: TestConfig) {
  const script = await scriptUpstream(steps);
  return inSessionObject(config, async ({ reasoner, logger, sessionId }) => {
    await reasoner.startTurn(`go ${script.marker}`);
    const warning = logger.events.find((e) => e.tag === "[AgentReasoner_TurnLimit]");
    return { level: warning?.level, pairs: Object.fromEntries(warning?.pairs ?? []), sessionId };
  });
}

const hello = { type: "completion" as const, toolCalls: [{ name: "agent_hello_world", arguments: '{"name":"A"}' }] };

describe("limits are logged", () => {
  it("logs a warning with the session id and the figure when the iteration limit stops a turn", async () => {
    const { level, pairs, sessionId } = await warningOf([hello, hello], { maxIterations: 2 });
    expect(level).toBe("Warning");
    expect(pairs).toMatchObject({ SessionId: sessionId, Limit: "iteration_limit", Figure: "2" });
  });

  it("logs a warning with the working time when the turn timeout stops a turn", async () => {
    const { pairs, sessionId } = await warningOf([{ type: "hang" }], { turnTimeoutMs: 200 });
    expect(pairs).toMatchObject({ SessionId: sessionId, Limit: "turn_timeout" });
    expect(pairs.Figure).toMatch(/^0\.[2-9] s$/);
  });

  it("logs a warning with the count when malformed tool calls stop a turn", async () => {
    const bad = { type: "completion" as const, content: '{"tool": "agent_hello_world"}' };
    const { pairs, sessionId } = await warningOf([bad, bad, bad], { toolFormat: "json" });
    expect(pairs).toMatchObject({ SessionId: sessionId, Limit: "malformed_tool_calls", Figure: "3" });
  });
});

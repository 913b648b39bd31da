// What the loop records in a turn's timeline (tracing off, as in this project): the wait for a person's approval
// with its length, a second run brought by the decision, and a stream that broke after its first byte: a restart
// step, and the time to first token of the stream that answered, not of the broken one.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TurnTimeline } from "../../src/wire/timeline";
import { authHeaders, TEST_KEYS } from "../fixtures/keys";
import { approve, createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";
import { mcpMode } from "../mcp/fixtures";
import { modeOnRoute, toUpstreamA, toUpstreamB } from "../routing/fixtures";

async function timelineOf(sessionId: string, turnId: string): Promise<TurnTimeline> {
  const response = await exports.default.fetch(
    `http://aptix.test/context/sessions/${sessionId}/turns/${turnId}/timeline`,
    { headers: authHeaders(TEST_KEYS.chat.key) },
  );
  expect(response.status).toBe(200);
  return TurnTimeline.parse(await response.json());
}

/** The turn id of the session's newest turn. */
async function lastTurnId(sessionId: string): Promise<string> {
  const response = await exports.default.fetch(`http://aptix.test/context/sessions/${sessionId}`, {
    headers: authHeaders(TEST_KEYS.chat.key),
  });
  const view = (await response.json()) as { turns: { turnId: string }[] };
  return view.turns.at(-1)?.turnId ?? "";
}

const partialChunk = (text: string) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "model-a", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}`;

describe("a turn's timeline", () => {
  it("records the wait for approval, as long as the pause, and the run the decision brought", async () => {
    const hello = { name: "agent_hello_world", arguments: JSON.stringify({ name: "Ada" }) };
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [hello] },
      { type: "completion", content: "Greeted." },
    ]);
    const id = await createSession(await mcpMode(["agent_hello_world"], ["agent_hello_world"]));
    const paused = await sendMessage(id, `write it ${script.marker}`);
    expect(paused.status).toBe("awaiting_approval");
    await scheduler.wait(60);
    const decided = await approve(id, [{ toolCallId: paused.toolCalls[0]?.id ?? "", approved: true }]);
    expect(decided.status).toBe(200);
    const timeline = await timelineOf(id, await lastTurnId(id));
    const runs = timeline.steps.filter((s) => s.kind === "run").map((s) => [s.name, s.outcome]);
    expect(runs).toEqual([
      ["start", "awaiting_approval"],
      ["resume_pause", "completed"],
    ]);
    const wait = timeline.steps.find((s) => s.kind === "wait");
    expect(wait?.name).toBe("approval");
    expect(wait?.durationMs).toBeGreaterThanOrEqual(50);
    const approvedCall = timeline.steps.filter((s) => s.kind === "tool_call").at(-1);
    expect([approvedCall?.name, approvedCall?.ranOn]).toEqual(["agent_hello_world", "server"]);
  });

  it("records a stream that broke after its first byte as a restart, timing the first token of the stream that answered", async () => {
    const fallback = await toUpstreamB();
    const route = await toUpstreamA({ fallbacks: [fallback] });
    const [a, b] = await Promise.all([
      scriptUpstream([{ type: "sse", events: [partialChunk("Partial answ")], eventDelayMs: 100, end: "destroy" }]),
      scriptUpstream(
        [{ type: "completion", content: "Whole answer.", delayFirstByteMs: 150 }],
        env.TEST_UPSTREAM_B_URL,
      ),
    ]);
    const id = await createSession(await modeOnRoute(route));
    const response = await sendMessage(id, `hi ${a.marker} ${b.marker}`);
    expect(response.text).toBe("Whole answer.");
    const timeline = await timelineOf(id, await lastTurnId(id));
    const restart = timeline.steps.find((s) => s.kind === "restart");
    expect(restart?.name).toBe(`${route} → ${fallback}`);
    const call = timeline.steps.find((s) => s.kind === "model_call");
    expect([call?.route, call?.model]).toEqual([fallback, "model-b"]);
    // The broken stream's first chunk came at once; the answer's, 150 ms after the restart at least.
    const restartOffset = restart?.offsetMs ?? 0;
    const callOffset = call?.offsetMs ?? 0;
    expect((call?.ttftMs ?? 0) + callOffset - restartOffset).toBeGreaterThanOrEqual(140);
  });
});

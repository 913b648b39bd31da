// Two tool calls with the same id are never merged: each keeps a distinct id, chosen deterministically.
import { describe, expect, it } from "vitest";
import { inSessionObject } from "../fixtures/in-object";
import { approve, createSession, sendMessage } from "../fixtures/sessions";
import { scriptUpstream } from "../fixtures/upstream";

const write = (path: string) => ({
  id: "call_dup",
  name: "workspace_write_file",
  arguments: JSON.stringify({ path, content: path }),
});
const hello = (name: string) => ({ id: "call_same", name: "agent_hello_world", arguments: JSON.stringify({ name }) });

describe("duplicate tool call ids", () => {
  it("keeps both of two approval-gated calls that share an id in one response, each with its own id", async () => {
    const script = await scriptUpstream([{ type: "completion", toolCalls: [write("a.txt"), write("b.txt")] }]);
    const id = await createSession("workspace");
    const paused = await sendMessage(id, `write two files ${script.marker}`);
    expect(paused.status).toBe("awaiting_approval");
    expect(paused.toolCalls.map((c) => [c.id, JSON.parse(c.argumentsJson).path, c.approval])).toEqual([
      ["call_dup", "a.txt", "pending"],
      ["call_dup_1_1", "b.txt", "pending"],
    ]);
    const approved = await approve(
      id,
      paused.toolCalls.map((c) => ({ toolCallId: c.id, approved: true })),
    );
    expect((approved.json as { status: string; toolCalls: { state?: string }[] }).status).toBe("awaiting_client");
    expect((approved.json as { toolCalls: unknown[] }).toolCalls).toHaveLength(2);
  });

  it("renames a call whose id an earlier response of the same turn used, and answers both", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [hello("Ada")] },
      { type: "completion", toolCalls: [hello("Bo")] },
      { type: "completion", content: "Greeted both." },
    ]);
    const response = await inSessionObject({}, async ({ reasoner }) => {
      const outcome = await reasoner.startTurn(`greet ${script.marker}`);
      if (!outcome.ok) throw new Error(outcome.message);
      return outcome.value;
    });
    expect(response.toolCalls.map((c) => [c.id, c.wasExecuted])).toEqual([
      ["call_same", true],
      ["call_same_2_0", true],
    ]);
    const sent = (await script.bodies()) as { messages: { role: string; tool_call_id?: string }[] }[];
    expect(sent[2]?.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual([
      "call_same",
      "call_same_2_0",
    ]);
  });
});

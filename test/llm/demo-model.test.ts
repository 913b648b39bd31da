// The offline demo model drives real tool calls through the loop, and says what it is in every answer.
import { describe, expect, it } from "vitest";
import { DEMO_STORY, DemoChatModel } from "../../src/llm/demo-model";
import { compactionRequest } from "../../src/prompts/compaction-prompt";
import type { AgentExecuteResponse } from "../../src/wire/turn";
import { inSessionObject } from "../fixtures/in-object";

const demo = { model: new DemoChatModel(0) };
const value = (outcome: { ok: true; value: AgentExecuteResponse } | { ok: false; message: string }) => {
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.value;
};

describe("offline demo model", () => {
  it("answers the compaction prompt with a deterministic summary of what the user asked", async () => {
    const request = compactionRequest(
      "[offline demo model] Summary: They met.",
      "User: read README.md\n\nAgent: Done.",
    );
    const answers = await Promise.all([1, 2].map(() => new DemoChatModel(0).complete({ messages: request })));
    expect(answers.map((a) => a.content)).toEqual([
      '[offline demo model] Summary: Before that: They met. The user sent 1 message and the agent replied 1 time. The user asked: "read README.md".',
      '[offline demo model] Summary: Before that: They met. The user sent 1 message and the agent replied 1 time. The user asked: "read README.md".',
    ]);
  });

  it("lists the modes through agent_list_modes", async () => {
    const response = await inSessionObject(
      {},
      async ({ reasoner }) => value(await reasoner.startTurn("what modes are there?")),
      demo,
    );
    expect(response.toolCalls.map((c) => c.name)).toEqual(["agent_list_modes"]);
    expect(response.text).toMatch(/^\[offline demo model\] These modes are available:/);
    expect(response.text).toContain("`ddr_authoring`");
  });

  it("greets through agent_hello_world", async () => {
    const response = await inSessionObject(
      {},
      async ({ reasoner }) => value(await reasoner.startTurn("say hello to Dana")),
      demo,
    );
    expect(response.toolCalls.map((c) => c.name)).toEqual(["agent_hello_world"]);
    expect(response.text).toBe("[offline demo model] Hello, Dana! Welcome to Aptix.");
  });

  it("tells a slow story for a turn to outlive a restart", async () => {
    const response = await inSessionObject(
      {},
      async ({ reasoner }) => value(await reasoner.startTurn("tell me a slow story")),
      demo,
    );
    expect(response.text).toBe(DEMO_STORY);
  });

  it("proposes a mode change, and makes it only after the user agrees", async () => {
    const { proposal, change, mode } = await inSessionObject(
      {},
      async ({ reasoner, store }) => ({
        proposal: value(await reasoner.startTurn("help me write a DDR for a weather tool")),
        change: value(await reasoner.startTurn("2")),
        mode: store.identity().mode,
      }),
      demo,
    );
    expect(proposal.toolCalls).toEqual([]);
    expect(proposal.text).toContain("1) Stay in the current mode, 2) Switch this session to **DDR Authoring**");
    expect(change.toolCalls.map((c) => [c.name, JSON.parse(c.argumentsJson).branch])).toEqual([
      ["agent_change_mode", false],
    ]);
    expect(mode).toBe("ddr_authoring");
    expect(change.text).toBe("[offline demo model] Done: the session is now in the ddr_authoring mode.");
  });

  it("reads a workspace file through the client hand-off", async () => {
    const { paused, done } = await inSessionObject(
      {},
      async ({ reasoner }) => {
        const paused = value(await reasoner.startTurn("read README.md"));
        const result = JSON.stringify({ path: "README.md", content: "# Project" });
        const done = value(
          await reasoner.applyToolResults([{ toolCallId: paused.toolCalls[0]?.id ?? "", resultJson: result }]),
        );
        return { paused, done };
      },
      { ...demo, mode: "workspace" },
    );
    expect(paused.status).toBe("awaiting_client");
    expect(paused.toolCalls[0]?.name).toBe("workspace_read_file");
    expect(done.text).toMatch(/^\[offline demo model\] README\.md has 9 characters/);
  });

  it("answers anything else with its help text, naming itself", async () => {
    const response = await inSessionObject(
      {},
      async ({ reasoner }) => value(await reasoner.startTurn("what is the capital of France?")),
      demo,
    );
    expect(response.text).toMatch(/^\[offline demo model\] I am the offline demo model/);
  });
});

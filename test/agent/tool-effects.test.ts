// The loop names no tool: a tool's success carries typed effects (a mode change, a branch) that the loop
// applies, whichever tool returns them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentReasoner } from "../../src/agent/agent-reasoner";
import { D1AgentModeCatalogService } from "../../src/modes/catalog-service";
import type { AgentSession } from "../../src/session/agent-session";
import { SessionStore } from "../../src/session/session-store";
import { modeChangeTool } from "../../src/tools/agent-change-mode";
import { type AgentTool, InvokeResult } from "../../src/tools/contract";
import { defineTool } from "../../src/tools/define-tool";
import { AgentToolRegistry } from "../../src/tools/registry";
import { directRouter } from "../fixtures/direct-router";
import { TEST_AGENT_CONFIG, upstreamModel } from "../fixtures/in-object";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { RecordingSessionManager, toolContext } from "../fixtures/tool-context";
import { scriptUpstream } from "../fixtures/upstream";

const TeleportArgs = z.object({ to: z.string().describe("Where to.") });

/** Not agent_change_mode: a tool of its own that reports a mode change and a branch as effects. */
function teleportTool(logger: RecordingAdminLogger): AgentTool {
  return defineTool({
    name: "test_teleport",
    label: "TeleportTool",
    usage: "Moves the work to another mode, in a new session.",
    description: "Moves the work.",
    category: "session",
    runsOn: "server",
    args: TeleportArgs,
    failureMessage: "TeleportTool failed.",
    logger,
    execute: (args) =>
      InvokeResult.create(JSON.stringify({ moved: args.to }), [
        { type: "mode_changed", to: args.to, reason: "teleported", branch: true },
      ]),
  });
}

describe("tool effects", () => {
  it("reports agent_change_mode's change as a mode_changed effect", async () => {
    const tool = modeChangeTool(new RecordingSessionManager(), new RecordingAdminLogger());
    const result = await tool.execute(JSON.stringify({ mode: "workspace", branch: true, reason: "r" }), toolContext());
    expect(result.effects).toEqual([{ type: "mode_changed", to: "workspace", reason: "r", branch: true }]);
  });

  it("applies a mode change with a branch from any tool: a new session, its id told to the model, one event", async () => {
    const script = await scriptUpstream([
      { type: "completion", toolCalls: [{ name: "test_teleport", arguments: '{"to":"workspace"}' }] },
      { type: "completion", content: "Moved." },
    ]);
    const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
    const { response, changes } = await runInDurableObject(stub, async (_instance: AgentSession, state) => {
      const store = new SessionStore(state.storage);
      store.create({ sessionId: state.id.toString(), org: "org-a", user: "alice", mode: "general" }, null);
      const logger = new RecordingAdminLogger();
      const registry = new AgentToolRegistry(logger);
      registry.registerTool(teleportTool(logger));
      const catalog = new D1AgentModeCatalogService(env.DB, null);
      const changes: unknown[] = [];
      const generalWithTeleport = async () => ({ ...(await catalog.getDefaultMode()), tools: ["test_teleport"] });
      const reasoner = new AgentReasoner({
        store,
        router: directRouter(upstreamModel()),
        registry,
        catalog: {
          ...catalog,
          getAllModes: () => catalog.getAllModes(),
          getMode: generalWithTeleport,
          getDefaultMode: generalWithTeleport,
        },
        basePrompt: async () => "You are a test agent.",
        config: TEST_AGENT_CONFIG,
        logger,
        createBranchSession: async (mode) => `branch-in-${mode}`,
        events: { modeChanged: (change) => changes.push(change) },
      });
      const outcome = await reasoner.startTurn(`go ${script.marker}`);
      if (!outcome.ok) throw new Error(outcome.message);
      return { response: outcome.value, changes };
    });
    expect(response.branchSessionId).toBe("branch-in-workspace");
    expect(changes).toEqual([
      { from: "general", to: "workspace", reason: "teleported", branchSessionId: "branch-in-workspace" },
    ]);
    const sent = (await script.bodies()) as { messages: { role: string; content: string }[] }[];
    expect(sent[1]?.messages.at(-1)?.content).toBe(
      '{"moved":"workspace"}\nA new session branch-in-workspace was started in that mode for the new work.',
    );
  });
});

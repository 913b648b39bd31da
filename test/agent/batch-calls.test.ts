// A batch's ready calls run one after another, each result stored as the next call goes out (so the next
// request does not wait at the object's output gate for that write), never later than that, and in order.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentReasoner } from "../../src/agent/agent-reasoner";
import type { StoredToolCall } from "../../src/agent/agent-tool-call";
import { D1AgentModeCatalogService } from "../../src/modes/catalog-service";
import type { AgentSession } from "../../src/session/agent-session";
import { SessionStore } from "../../src/session/session-store";
import type { AgentTool } from "../../src/tools/contract";
import { defineTool } from "../../src/tools/define-tool";
import { AgentToolRegistry } from "../../src/tools/registry";
import { directRouter } from "../fixtures/direct-router";
import { TEST_AGENT_CONFIG, upstreamModel } from "../fixtures/in-object";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { scriptUpstream } from "../fixtures/upstream";

const StepArgs = z.object({ step: z.string().describe("Which step.") });

/** What happened, in order: a step's call starting, a settled call stored, a completion frame. */
type Happened = `started ${string}` | `stored ${string}` | `framed ${string}`;

/** A server tool that notes when each call starts, and finishes once its step's gate (if any) opens. */
function stepTool(logger: RecordingAdminLogger, happened: Happened[], gates: Map<string, Promise<void>>): AgentTool {
  return defineTool({
    name: "test_step",
    label: "StepTool",
    usage: "Does one step.",
    category: "session",
    runsOn: "server",
    args: StepArgs,
    failureMessage: "StepTool failed.",
    logger,
    execute: async (args) => {
      happened.push(`started ${args.step}`);
      await gates.get(args.step);
      return { done: args.step };
    },
  });
}

/** The session's store, noting each settled call it stores. */
class NotingStore extends SessionStore {
  constructor(
    storage: DurableObjectStorage,
    private readonly happened: Happened[],
  ) {
    super(storage);
  }

  override saveToolCall(call: StoredToolCall): void {
    super.saveToolCall(call);
    if (call.state === "settled") this.happened.push(`stored ${JSON.parse(call.argumentsJson).step}`);
  }
}

const stepCall = (step: string) => ({ id: `call_${step}`, name: "test_step", arguments: JSON.stringify({ step }) });

/**
 * Runs one turn whose model asks for the steps at once, then answers. `during` runs while the turn does, with
 * the store, and opens the gates it holds.
 */
async function batchTurn(
  steps: string[],
  options: {
    gates?: Map<string, Promise<void>>;
    during?: (store: SessionStore, happened: Happened[]) => Promise<void>;
  } = {},
) {
  const script = await scriptUpstream([
    { type: "completion", toolCalls: steps.map(stepCall) },
    { type: "completion", content: "All steps done." },
  ]);
  const stub = env.AGENT_SESSION.get(env.AGENT_SESSION.newUniqueId());
  return runInDurableObject(stub, async (_instance: AgentSession, state) => {
    const happened: Happened[] = [];
    const store = new NotingStore(state.storage, happened);
    store.create({ sessionId: state.id.toString(), org: "org-a", user: "alice", mode: "general" }, null);
    const logger = new RecordingAdminLogger();
    const registry = new AgentToolRegistry(logger);
    registry.registerTool(stepTool(logger, happened, options.gates ?? new Map()));
    const catalog = new D1AgentModeCatalogService(env.DB, null);
    const generalWithSteps = async () => ({ ...(await catalog.getDefaultMode()), tools: ["test_step"] });
    const reasoner = new AgentReasoner({
      store,
      router: directRouter(upstreamModel()),
      registry,
      catalog: {
        ...catalog,
        getAllModes: () => catalog.getAllModes(),
        getMode: generalWithSteps,
        getDefaultMode: generalWithSteps,
      },
      basePrompt: async () => "You are a test agent.",
      config: TEST_AGENT_CONFIG,
      logger,
      createBranchSession: async () => "branch-not-expected",
      events: { toolCallCompleted: (call) => happened.push(`framed ${JSON.parse(call.argumentsJson).step}`) },
    });
    const turn = reasoner.startTurn(`do the steps ${script.marker}`);
    await options.during?.(store, happened);
    const outcome = await turn;
    if (!outcome.ok) throw new Error(outcome.message);
    return { response: outcome.value, happened };
  });
}

describe("a batch's calls", () => {
  it("starts the next call before storing the previous call's result", async () => {
    const { happened } = await batchTurn(["a", "b", "c"]);
    expect(happened).toEqual([
      "started a",
      "started b",
      "stored a",
      "framed a",
      "started c",
      "stored b",
      "framed b",
      "stored c",
      "framed c",
    ]);
  });

  it("keeps every result, in the order the model asked for the calls", async () => {
    const { response } = await batchTurn(["a", "b", "c"]);
    expect(response.status).toBe("completed");
    expect(response.toolCalls.map((c) => [c.id, c.wasExecuted, c.resultJson])).toEqual([
      ["call_a", true, '{"done":"a"}'],
      ["call_b", true, '{"done":"b"}'],
      ["call_c", true, '{"done":"c"}'],
    ]);
  });

  it("stores a finished call while the next one is still running", async () => {
    let open = () => {};
    const gates = new Map([["b", new Promise<void>((resolve) => (open = resolve))]]);
    let whileBRuns: (string | null)[] = [];
    await batchTurn(["a", "b"], {
      gates,
      during: async (store, happened) => {
        // b cannot finish before its gate opens: a's result must be stored meanwhile (within two seconds).
        const results = () => store.toolCalls(store.turn()?.turnId ?? "").map((c) => c.resultJson);
        const deadline = Date.now() + 2_000;
        while ((!happened.includes("started b") || results()[0] === null) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        whileBRuns = results();
        open();
      },
    });
    expect(whileBRuns).toEqual(['{"done":"a"}', null]);
  });
});

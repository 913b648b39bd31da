// The AgentToolExecutor never lets an exception escape (AGN-005 §5.4), for any AgentTool: one that does not
// extend the base class and throws, or returns something that is not an InvokeResult, becomes a failed call.
import { describe, expect, it } from "vitest";
import type { StoredToolCall } from "../../src/agent/agent-tool-call";
import { AgentToolExecutor } from "../../src/agent/agent-tool-executor";
import type {
  AgentTool,
  AgentToolExecutionContext,
  InvokeResult,
  OpenAIFunctionToolSchema,
} from "../../src/tools/contract";
import { AgentToolRegistry } from "../../src/tools/registry";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

const schema = (name: string): OpenAIFunctionToolSchema => ({
  type: "function",
  name,
  description: "A tool for the executor's tests.",
  parameters: { type: "object", properties: {}, required: [] },
});

/** Implements AgentTool by hand (no base class) and throws from execute. */
class ThrowingTool implements AgentTool {
  static readonly ToolName = "test_throwing_tool";
  static readonly ToolUsageMetadata = "Never call this: it throws.";
  static getSchema() {
    return schema(ThrowingTool.ToolName);
  }
  readonly name = ThrowingTool.ToolName;
  readonly toolUsageMetadata = ThrowingTool.ToolUsageMetadata;
  readonly category = "general";
  readonly isToolFullyExecutedOnServer = true;
  readonly requiresApproval = false;
  readonly priority = 1;
  getSchema() {
    return ThrowingTool.getSchema();
  }
  async execute(): Promise<InvokeResult<string>> {
    throw new Error("disk on fire at /srv/secret/path");
  }
}

/** Returns a value that is not an InvokeResult. */
class SloppyTool implements AgentTool {
  static readonly ToolName = "test_sloppy_tool";
  static readonly ToolUsageMetadata = "Never call this: it returns nonsense.";
  static getSchema() {
    return schema(SloppyTool.ToolName);
  }
  readonly name = SloppyTool.ToolName;
  readonly toolUsageMetadata = SloppyTool.ToolUsageMetadata;
  readonly category = "general";
  readonly isToolFullyExecutedOnServer = true;
  readonly requiresApproval = false;
  readonly priority = 1;
  getSchema() {
    return SloppyTool.getSchema();
  }
  execute(_args: string | null | undefined, _context: AgentToolExecutionContext | null | undefined) {
    return Promise.resolve(JSON.parse('{"ok":1}'));
  }
}

function call(name: string): StoredToolCall {
  return {
    id: "call_1",
    name,
    argumentsJson: "{}",
    isServerTool: true,
    wasExecuted: false,
    requiresClientExecution: false,
    requiresApproval: false,
    approval: null,
    resultJson: null,
    errorMessage: null,
    turnId: "turn-1",
    batch: 1,
    position: 0,
    state: "ready",
    terminate: false,
  };
}

function executorWith(tool: AgentTool) {
  const logger = new RecordingAdminLogger();
  const registry = new AgentToolRegistry(logger);
  registry.registerTool(tool);
  return { executor: new AgentToolExecutor(registry, logger), logger };
}

describe("AgentToolExecutor exception handling", () => {
  it("turns an exception thrown by a tool that does not extend the base class into a failed call, logged", async () => {
    const { executor, logger } = executorWith(new ThrowingTool());
    const done = await executor.executeServerTool(call(ThrowingTool.ToolName), toolContext());
    expect([done.state, done.wasExecuted, done.errorMessage]).toEqual([
      "settled",
      false,
      "test_throwing_tool failed unexpectedly.",
    ]);
    expect(logger.exceptions.map((e) => e.tag)).toEqual(["[test_throwing_tool_ExecuteAsync__Exception]"]);
  });

  it("turns a result that is not an InvokeResult into a failed call", async () => {
    const { executor, logger } = executorWith(new SloppyTool());
    const done = await executor.executeServerTool(call(SloppyTool.ToolName), toolContext());
    expect([done.state, done.errorMessage]).toEqual(["settled", "test_sloppy_tool failed unexpectedly."]);
    expect(logger.errors.map((e) => e.tag)).toEqual(["[test_sloppy_tool_ExecuteAsync__Exception]"]);
  });
});

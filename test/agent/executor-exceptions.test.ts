// The AgentToolExecutor never lets an exception escape (AGN-005 §5.4), for any AgentTool: one written by hand
// (not made with defineTool) that throws, or returns something that is not an InvokeResult, becomes a failed call.
import { describe, expect, it } from "vitest";
import type { StoredToolCall } from "../../src/agent/agent-tool-call";
import { AgentToolExecutor } from "../../src/agent/agent-tool-executor";
import type { AgentTool, InvokeResult, OpenAIFunctionToolSchema } from "../../src/tools/contract";
import { AgentToolRegistry } from "../../src/tools/registry";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

/** An AgentTool written by hand (not made with defineTool, so nothing wraps its execute). */
function handWrittenTool(toolName: string, execute: () => Promise<unknown>): AgentTool {
  const schema = (): OpenAIFunctionToolSchema => ({
    type: "function",
    name: toolName,
    description: "A tool for the executor's tests.",
    parameters: { type: "object", properties: {}, required: [] },
  });
  return {
    name: toolName,
    label: toolName,
    toolUsageMetadata: "Never call this: it misbehaves on purpose.",
    category: "general",
    isToolFullyExecutedOnServer: true,
    requiresApproval: false,
    repeatable: false,
    priority: 1,
    getSchema: schema,
    execute: () => execute() as Promise<InvokeResult<string>>,
  };
}

/** Throws from execute. */
const throwingTool = handWrittenTool("test_throwing_tool", async () => {
  throw new Error("disk on fire at /srv/secret/path");
});
/** Returns a value that is not an InvokeResult. */
const sloppyTool = handWrittenTool("test_sloppy_tool", async () => ({ ok: 1 }));

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
  it("turns an exception thrown by a tool not made with defineTool into a failed call, logged", async () => {
    const { executor, logger } = executorWith(throwingTool);
    const done = await executor.executeServerTool(call(throwingTool.name), toolContext());
    expect([done.state, done.wasExecuted, done.errorMessage]).toEqual([
      "settled",
      false,
      "test_throwing_tool failed unexpectedly.",
    ]);
    expect(logger.exceptions.map((e) => e.tag)).toEqual(["[test_throwing_tool_ExecuteAsync__Exception]"]);
  });

  it("turns a result that is not an InvokeResult into a failed call", async () => {
    const { executor, logger } = executorWith(sloppyTool);
    const done = await executor.executeServerTool(call(sloppyTool.name), toolContext());
    expect([done.state, done.errorMessage]).toEqual(["settled", "test_sloppy_tool failed unexpectedly."]);
    expect(logger.errors.map((e) => e.tag)).toEqual(["[test_sloppy_tool_ExecuteAsync__Exception]"]);
  });
});

// agent_hello_world (TUL-011 §6): happy path, argument validation and exception handling (TUL-011 §5).
import { describe, expect, it } from "vitest";
import { helloWorldTool as tool } from "../../src/tools/agent-hello-world";
import type { AgentToolExecutionContext } from "../../src/tools/contract";
import { AgentToolRegistry } from "../../src/tools/registry";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

const MESSAGES = {
  emptyArguments: "HelloWorldTool requires a non-empty arguments object.",
  missingName: "HelloWorldTool requires a non-empty 'name' string.",
  failed: "HelloWorldTool failed to create a greeting.",
};

describe("HelloWorldTool (TUL-011 §6)", () => {
  it("greets by name and returns message, conversationId and sessionId", async () => {
    const result = await tool.execute('{"name":"Dana"}', toolContext());
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result ?? "")).toEqual({
      message: "Hello, Dana! Welcome to Aptix.",
      conversationId: "conversation-1",
      sessionId: "session-1",
    });
  });

  it("refuses empty arguments and a missing or blank name", async () => {
    expect((await tool.execute("", toolContext())).errorMessage).toBe(MESSAGES.emptyArguments);
    expect((await tool.execute("{}", toolContext())).errorMessage).toBe(MESSAGES.missingName);
    expect((await tool.execute('{"name":" "}', toolContext())).errorMessage).toBe(MESSAGES.missingName);
    expect((await tool.execute('{"name":42}', toolContext())).errorMessage).toBe(MESSAGES.missingName);
  });

  it("turns an unexpected exception into a logged, generic failure without the details", async () => {
    const logger = new RecordingAdminLogger();
    // A value needing no service: it logs to the context's logger.
    const context = toolContext({ logger });
    const exploding: AgentToolExecutionContext = Object.defineProperty({ ...context }, "conversationId", {
      get() {
        throw new Error("secret internal detail");
      },
    });
    const result = await tool.execute('{"name":"Dana"}', exploding);
    expect(result).toEqual({ successful: false, errorMessage: MESSAGES.failed });
    expect(logger.exceptions[0]?.tag).toBe("[agent_hello_world_ExecuteAsync__Exception]");
  });

  it("is named agent_hello_world, server-final, registers cleanly and carries its usage metadata", () => {
    const logger = new RecordingAdminLogger();
    new AgentToolRegistry(logger).registerTool(tool);
    expect(logger.errors).toHaveLength(0);
    expect([tool.name, tool.isToolFullyExecutedOnServer]).toEqual(["agent_hello_world", true]);
    expect(tool.toolUsageMetadata).toContain("personalized greeting when the user asks to be greeted or welcomed");
  });

  it("publishes one required string parameter, name", () => {
    const schema = tool.getSchema();
    expect(schema).toEqual({
      type: "function",
      name: "agent_hello_world",
      description: "Creates a friendly greeting using the user's name.",
      parameters: {
        type: "object",
        properties: { name: { type: "string", description: "The name of the person to greet." } },
        required: ["name"],
        additionalProperties: false,
      },
    });
  });
});

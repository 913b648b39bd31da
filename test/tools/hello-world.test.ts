// agent_hello_world (TUL-011 §6): happy path, argument validation and exception handling (TUL-011 §5).
import { describe, expect, it } from "vitest";
import { HELLO_WORLD_MESSAGES, HelloWorldTool } from "../../src/tools/agent-hello-world";
import type { AgentToolExecutionContext } from "../../src/tools/contract";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { toolContext } from "../fixtures/tool-context";

describe("HelloWorldTool (TUL-011 §6)", () => {
  it("greets by name and returns message, conversationId and sessionId", async () => {
    const tool = new HelloWorldTool(new RecordingAdminLogger());
    const result = await tool.execute('{"name":"Dana"}', toolContext());
    expect(result.successful).toBe(true);
    expect(JSON.parse(result.result ?? "")).toEqual({
      message: "Hello, Dana! Welcome to Aptix.",
      conversationId: "conversation-1",
      sessionId: "session-1",
    });
  });

  it("refuses empty arguments and a missing or blank name", async () => {
    const tool = new HelloWorldTool(new RecordingAdminLogger());
    expect((await tool.execute("", toolContext())).errorMessage).toBe(HELLO_WORLD_MESSAGES.emptyArguments);
    expect((await tool.execute("{}", toolContext())).errorMessage).toBe(HELLO_WORLD_MESSAGES.missingName);
    expect((await tool.execute('{"name":" "}', toolContext())).errorMessage).toBe(HELLO_WORLD_MESSAGES.missingName);
    expect((await tool.execute('{"name":42}', toolContext())).errorMessage).toBe(HELLO_WORLD_MESSAGES.missingName);
  });

  it("turns an unexpected exception into a logged, generic failure without the details", async () => {
    const logger = new RecordingAdminLogger();
    const tool = new HelloWorldTool(logger);
    const context = toolContext();
    const exploding: AgentToolExecutionContext = Object.defineProperty({ ...context }, "conversationId", {
      get() {
        throw new Error("secret internal detail");
      },
    });
    const result = await tool.execute('{"name":"Dana"}', exploding);
    expect(result).toEqual({ successful: false, errorMessage: HELLO_WORLD_MESSAGES.failed });
    expect(logger.exceptions[0]?.tag).toBe("[agent_hello_world_ExecuteAsync__Exception]");
  });

  it("publishes one required string parameter, name", () => {
    const schema = HelloWorldTool.getSchema();
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

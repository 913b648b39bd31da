// TUL-007 §6's four required tests for agent_change_mode, plus §3.4's other rules and its guidance.
import { describe, expect, it } from "vitest";
import { MODE_CHANGE_MESSAGES, MODE_CHANGE_TOOL_NAME, modeChangeTool } from "../../src/tools/agent-change-mode";
import { SessionModeError } from "../../src/tools/session-manager";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { RecordingSessionManager, toolContext } from "../fixtures/tool-context";

function setup(failWith?: Error) {
  const sessionManager = new RecordingSessionManager(failWith);
  const logger = new RecordingAdminLogger();
  return { sessionManager, logger, tool: modeChangeTool(sessionManager, logger) };
}

/** TUL-007 §5.3's schema description, copied from the specification. */
const TUL_007_SCHEMA_DESCRIPTION =
  "Changes the mode for the current agent session to the specified mode string. Call only after the user confirms a mode change, and provide a short 'reason' describing why this mode fits the current request. Set branch=true when the user wants the new work to start as a separate session.";

const validArgs = { mode: "ddr_authoring", branch: true, reason: "The user wants to write a DDR." };

describe("ModeChangeTool (TUL-007 §6)", () => {
  it("Happy Path: calls setSessionMode once with the context's ids and returns {success, mode, branch, reason}", async () => {
    const { tool, sessionManager } = setup();
    const result = await tool.execute(JSON.stringify(validArgs), toolContext());

    expect(result.successful).toBe(true);
    expect(sessionManager.calls).toEqual([
      {
        sessionId: "session-1",
        mode: "ddr_authoring",
        reason: "The user wants to write a DDR.",
        org: "org-a",
        user: "alice",
      },
    ]);
    expect(JSON.parse(result.result ?? "")).toEqual({
      success: true,
      mode: "ddr_authoring",
      branch: true,
      reason: "The user wants to write a DDR.",
    });
  });

  it("Missing Mode: fails naming 'mode' and never calls setSessionMode", async () => {
    for (const args of [
      { branch: false, reason: "r" },
      { mode: "", branch: false, reason: "r" },
      { mode: "  ", branch: false, reason: "r" },
    ]) {
      const { tool, sessionManager } = setup();
      const result = await tool.execute(JSON.stringify(args), toolContext());
      expect(result).toEqual({ successful: false, errorMessage: MODE_CHANGE_MESSAGES.missingMode });
      expect(sessionManager.calls).toHaveLength(0);
    }
  });

  it("Missing Reason: fails naming 'reason' and never calls setSessionMode", async () => {
    for (const args of [
      { mode: "workspace", branch: false },
      { mode: "workspace", branch: false, reason: "" },
    ]) {
      const { tool, sessionManager } = setup();
      const result = await tool.execute(JSON.stringify(args), toolContext());
      expect(result).toEqual({ successful: false, errorMessage: MODE_CHANGE_MESSAGES.missingReason });
      expect(sessionManager.calls).toHaveLength(0);
    }
  });

  it("Exception from Session Manager: logs it with the AGN-005 tag and returns the fixed failure", async () => {
    const { tool, logger, sessionManager } = setup(new Error("storage exploded at /internal/path"));
    const result = await tool.execute(JSON.stringify(validArgs), toolContext());

    expect(sessionManager.calls).toHaveLength(1);
    expect(result).toEqual({ successful: false, errorMessage: "ModeChangeTool failed to change the session mode." });
    expect(logger.exceptions).toHaveLength(1);
    expect(logger.exceptions[0]?.tag).toBe("[agent_change_mode_ExecuteAsync__Exception]");
    expect(logger.exceptions[0]?.error).toEqual(new Error("storage exploded at /internal/path"));
  });
});

describe("ModeChangeTool validation (TUL-007 §3.4)", () => {
  it("refuses null or whitespace arguments before anything else", async () => {
    for (const argumentsJson of [null, undefined, "", "   "]) {
      const { tool, sessionManager } = setup();
      const result = await tool.execute(argumentsJson, null);
      expect(result).toEqual({ successful: false, errorMessage: MODE_CHANGE_MESSAGES.emptyArguments });
      expect(sessionManager.calls).toHaveLength(0);
    }
  });

  it("refuses a missing execution context", async () => {
    const { tool, sessionManager } = setup();
    const result = await tool.execute(JSON.stringify(validArgs), null);
    expect(result).toEqual({ successful: false, errorMessage: MODE_CHANGE_MESSAGES.missingContext });
    expect(sessionManager.calls).toHaveLength(0);
  });

  it("refuses a context without a session id and logs an error", async () => {
    const { tool, sessionManager, logger } = setup();
    const result = await tool.execute(JSON.stringify(validArgs), toolContext({ sessionId: "" }));
    expect(result).toEqual({ successful: false, errorMessage: MODE_CHANGE_MESSAGES.missingSessionId });
    expect(logger.errors).toHaveLength(1);
    expect(sessionManager.calls).toHaveLength(0);
  });

  it("refuses a missing or non-boolean branch flag", async () => {
    for (const args of [
      { mode: "workspace", reason: "r" },
      { mode: "workspace", branch: "yes", reason: "r" },
    ]) {
      const { tool, sessionManager } = setup();
      const result = await tool.execute(JSON.stringify(args), toolContext());
      expect(result).toEqual({ successful: false, errorMessage: MODE_CHANGE_MESSAGES.missingBranch });
      expect(sessionManager.calls).toHaveLength(0);
    }
  });

  it("reports the first broken rule in the order mode, branch, reason", async () => {
    const { tool } = setup();
    expect((await tool.execute("{}", toolContext())).errorMessage).toBe(MODE_CHANGE_MESSAGES.missingMode);
    expect((await tool.execute('{"mode":"x"}', toolContext())).errorMessage).toBe(MODE_CHANGE_MESSAGES.missingBranch);
    expect((await tool.execute('{"mode":"x","branch":true}', toolContext())).errorMessage).toBe(
      MODE_CHANGE_MESSAGES.missingReason,
    );
  });

  it("refuses sessionId, org or user in the arguments: they come only from the context", async () => {
    const { tool, sessionManager } = setup();
    const result = await tool.execute(JSON.stringify({ ...validArgs, sessionId: "other", org: "evil" }), toolContext());
    expect(result.successful).toBe(false);
    expect(result.errorMessage).toContain("'sessionId'");
    expect(result.errorMessage).toContain("'org'");
    expect(sessionManager.calls).toHaveLength(0);
  });

  it("refuses arguments that are not a JSON object", async () => {
    for (const argumentsJson of ["{not json", "[1,2]", '"mode"']) {
      const { tool, sessionManager } = setup();
      const result = await tool.execute(argumentsJson, toolContext());
      expect(result.successful).toBe(false);
      expect(result.errorMessage).toMatch(/^ModeChangeTool requires its arguments as a JSON object/);
      expect(sessionManager.calls).toHaveLength(0);
    }
  });

  it("answers a refused mode with exactly TUL-007's failure message, the session's explanation going to the log", async () => {
    const { tool, logger } = setup(new SessionModeError("Unknown mode 'nope'. Known modes: general, workspace."));
    const result = await tool.execute(JSON.stringify({ ...validArgs, mode: "nope" }), toolContext());
    expect(result).toEqual({ successful: false, errorMessage: "ModeChangeTool failed to change the session mode." });
    expect(logger.exceptions.map((e) => (e.error instanceof Error ? e.error.message : ""))).toEqual([
      "Unknown mode 'nope'. Known modes: general, workspace.",
    ]);
  });

  it("refuses a null session manager at construction (TUL-007 §3.2)", () => {
    expect(() => Reflect.apply(modeChangeTool, undefined, [null, new RecordingAdminLogger()])).toThrow(
      "ModeChangeTool requires a non-null sessionManager (TUL-007 §3.2).",
    );
  });

  it("refuses a null logger at construction (TUL-007 §3.2)", () => {
    expect(() => Reflect.apply(modeChangeTool, undefined, [new RecordingSessionManager(), null])).toThrow(
      "ModeChangeTool requires a non-null logger (TUL-007 §3.2).",
    );
  });
});

describe("ModeChangeTool identity and guidance (TUL-007 §3.1, §4, §5)", () => {
  it("is named agent_change_mode, server-final, and carries §5.2's usage metadata", () => {
    const { tool } = setup();
    expect(tool.name).toBe("agent_change_mode");
    expect(MODE_CHANGE_TOOL_NAME).toBe("agent_change_mode");
    expect(tool.isToolFullyExecutedOnServer).toBe(true);
    expect(tool.toolUsageMetadata).toContain("only after the user has explicitly agreed to switch");
    expect(tool.toolUsageMetadata).toContain("branch=true when the user wants to switch and start a new session");
  });

  it("publishes a schema with required mode, branch and reason and §5.3's description", () => {
    const schema = setup().tool.getSchema();
    expect(schema.name).toBe("agent_change_mode");
    expect(schema.description).toBe(TUL_007_SCHEMA_DESCRIPTION);
    expect(schema.description).toContain("Call only after the user confirms a mode change");
    expect(schema.parameters.required).toEqual(["mode", "branch", "reason"]);
    expect(schema.parameters.properties.mode?.type).toBe("string");
    expect(schema.parameters.properties.branch?.type).toBe("boolean");
    expect(schema.parameters.properties.reason?.type).toBe("string");
    expect(Object.keys(schema.parameters.properties)).not.toContain("sessionId");
  });
});

// TUL-010 §6's four required tests for agent_list_modes, plus its read-only and empty-catalog rules.
import { describe, expect, it } from "vitest";
import { agentListModesTool, LIST_MODES_MESSAGES } from "../../src/tools/agent-list-modes";
import { AgentToolRegistry } from "../../src/tools/registry";
import { RecordingAdminLogger } from "../fixtures/recording-logger";
import { sampleMode, stubCatalog, toolContext } from "../fixtures/tool-context";

const modes = [
  sampleMode(),
  sampleMode({
    id: "fedcba9876543210fedcba9876543210",
    key: "ddr_authoring",
    displayName: "DDR Authoring",
    isDefault: false,
    exampleUtterances: ["Draft a DDR for a search tool."],
  }),
];

describe("AgentListModesTool (TUL-010 §6)", () => {
  it("Schema and registration: RegisterTool succeeds with a recording logger", () => {
    const logger = new RecordingAdminLogger();
    const registry = new AgentToolRegistry(logger);
    expect(() => registry.registerTool(agentListModesTool(stubCatalog(modes), logger))).not.toThrow();
    expect(registry.getTool("agent_list_modes")?.name).toBe("agent_list_modes");
    expect(logger.errors).toHaveLength(0);
  });

  it("Happy path with catalog data: returns parseable JSON with the modes and their required fields", async () => {
    const tool = agentListModesTool(stubCatalog(modes), new RecordingAdminLogger());
    const result = await tool.execute("{}", toolContext());

    expect(result.successful).toBe(true);
    const payload = JSON.parse(result.result ?? "") as { modes: Record<string, unknown>[] };
    expect(payload.modes).toHaveLength(2);
    expect(payload.modes[0]).toEqual({
      id: "0123456789abcdef0123456789abcdef",
      key: "general",
      displayName: "General Chat",
      description: "Everyday questions.",
      systemPromptSummary: "Answer directly.",
      isDefault: true,
      humanRoleHints: ["anyone"],
      exampleUtterances: null,
    });
  });

  it("Happy path with includeExamples: the example utterances are included", async () => {
    const tool = agentListModesTool(stubCatalog(modes), new RecordingAdminLogger());
    const result = await tool.execute('{"includeExamples": true}', toolContext());

    const payload = JSON.parse(result.result ?? "") as { modes: { key: string; exampleUtterances: string[] }[] };
    expect(payload.modes.map((m) => m.exampleUtterances)).toEqual([
      ["What can you do?", "Say hello to Dana."],
      ["Draft a DDR for a search tool."],
    ]);
  });

  it("Catalog failure path: a throwing catalog gives a failed result, a logged exception and no JSON", async () => {
    const logger = new RecordingAdminLogger();
    const tool = agentListModesTool(stubCatalog(new Error("D1 is down")), logger);
    const result = await tool.execute("{}", toolContext());

    expect(result).toEqual({ successful: false, errorMessage: LIST_MODES_MESSAGES.failed });
    expect(result.result).toBeUndefined();
    expect(logger.exceptions.map((e) => e.tag)).toEqual(["[agent_list_modes_ExecuteAsync__Exception]"]);
  });
});

describe("AgentListModesTool semantics (TUL-010 §3, §4)", () => {
  it("fails cleanly and logs when the catalog returns null", async () => {
    const logger = new RecordingAdminLogger();
    const outcome = await agentListModesTool(stubCatalog(null), logger).execute("{}", toolContext());
    expect(outcome).toEqual({ successful: false, errorMessage: LIST_MODES_MESSAGES.noCatalog });
    expect(logger.errors).toHaveLength(1);
  });

  it('answers an empty catalog with a successful {"modes": []}', async () => {
    const logger = new RecordingAdminLogger();
    const outcome = await agentListModesTool(stubCatalog([]), logger).execute("{}", toolContext());
    expect(outcome.successful).toBe(true);
    expect(JSON.parse(outcome.result ?? "")).toEqual({ modes: [] });
    expect(logger.errors).toHaveLength(0);
  });

  it("accepts empty arguments, since it has no required argument", async () => {
    const tool = agentListModesTool(stubCatalog(modes), new RecordingAdminLogger());
    for (const argumentsJson of [null, "", "  "]) {
      expect((await tool.execute(argumentsJson, toolContext())).successful).toBe(true);
    }
  });

  it("refuses a non-boolean includeExamples", async () => {
    const tool = agentListModesTool(stubCatalog(modes), new RecordingAdminLogger());
    const result = await tool.execute('{"includeExamples":"yes"}', toolContext());
    expect(result.successful).toBe(false);
    expect(result.errorMessage).toContain("includeExamples");
  });

  it("gives the same JSON for the same catalog (idempotent, read-only)", async () => {
    const tool = agentListModesTool(stubCatalog(modes), new RecordingAdminLogger());
    const first = await tool.execute('{"includeExamples":true}', toolContext());
    const second = await tool.execute('{"includeExamples":true}', toolContext());
    expect(second.result).toBe(first.result);
  });

  it("publishes includeExamples as an optional boolean with no required properties", () => {
    const tool = agentListModesTool(stubCatalog(modes), new RecordingAdminLogger());
    const schema = tool.getSchema();
    expect(schema.parameters.properties.includeExamples?.type).toBe("boolean");
    expect(schema.parameters.required).toEqual([]);
    expect(tool.toolUsageMetadata).toContain("instead of agent_change_mode");
  });
});

// AgentToolRegistry refuses each kind of malformed tool (TUL-011 §2, §4): one test per rule, first for tools
// made with defineTool and broken in each way a definition can be, then for values built by hand.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentTool, OpenAIFunctionToolSchema } from "../../src/tools/contract";
import { defineTool, type ForeignArgs, type ToolDefinition } from "../../src/tools/define-tool";
import { AgentToolContractError, AgentToolRegistry } from "../../src/tools/registry";
import { RecordingAdminLogger } from "../fixtures/recording-logger";

const ProbeArgs = z.object({ text: z.string().describe("Some text.") });

type ProbeDefinition = ToolDefinition<z.ZodObject, Record<string, unknown>>;

/** A tool made with defineTool, well formed unless `overrides` break it. */
function probeTool(overrides: Partial<ProbeDefinition> = {}): AgentTool {
  return defineTool({
    name: "probe_tool",
    label: "ProbeTool",
    usage: "Use it to probe.",
    description: "A probe.",
    category: "general",
    runsOn: "server",
    args: ProbeArgs,
    execute: () => ({}),
    ...overrides,
  });
}

/** A tool made with defineTool whose arguments are a foreign JSON schema. */
function foreignProbeTool(args: ForeignArgs): AgentTool {
  return defineTool({
    name: "probe_tool",
    label: "ProbeTool",
    usage: "Use it to probe.",
    description: "A probe.",
    category: "general",
    runsOn: "server",
    args,
    execute: () => ({}),
  });
}

const goodSchema = (): OpenAIFunctionToolSchema => ({
  type: "function",
  name: "probe_tool",
  description: "A probe.",
  parameters: {
    type: "object",
    properties: { text: { type: "string", description: "Some text." } },
    required: ["text"],
  },
});

/** A well-formed tool whose getSchema is replaced, as someone writing an AgentTool by hand could. */
function handWrittenTool(getSchema: (() => unknown) | undefined): AgentTool {
  return Object.assign(probeTool(), { getSchema });
}

const withSchema = (change: (schema: ReturnType<typeof goodSchema>) => unknown) => () => change(goodSchema());

function refusal(tool: AgentTool, registry = new AgentToolRegistry(new RecordingAdminLogger())): string {
  try {
    registry.registerTool(tool);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentToolContractError);
    return (error as Error).message;
  }
  throw new Error("registerTool accepted a malformed tool");
}

describe("AgentToolRegistry.registerTool refusals of tools made with defineTool", () => {
  it("accepts a well-formed tool", () => {
    const registry = new AgentToolRegistry(new RecordingAdminLogger());
    registry.registerTool(probeTool());
    expect(registry.tools.map((t) => t.name)).toEqual(["probe_tool"]);
  });

  it("accepts a well-formed tool whose arguments are a foreign JSON schema", () => {
    const registry = new AgentToolRegistry(new RecordingAdminLogger());
    registry.registerTool(foreignProbeTool({ jsonSchema: goodSchema().parameters }));
    expect(registry.getTool("probe_tool")?.getSchema()).toEqual(goodSchema());
  });

  it("refuses a missing or empty ToolName", () => {
    expect(refusal(probeTool({ name: "" }))).toContain("declares no non-empty static ToolName");
    expect(refusal(Object.assign(probeTool(), { name: undefined }))).toContain("declares no non-empty static ToolName");
  });

  it("refuses a ToolName that does not match ^[a-zA-Z0-9_-]+$", () => {
    expect(refusal(probeTool({ name: "probe tool!" }))).toContain("must match ^[a-zA-Z0-9_-]+$");
  });

  it("refuses a tool whose name is not its ToolName (the name its schema gives the model)", () => {
    expect(probeTool().getSchema().name).toBe("probe_tool");
    expect(refusal(Object.assign(probeTool(), { name: "other_name" }))).toContain(
      "its schema name must be its ToolName",
    );
  });

  it("refuses a missing or empty ToolUsageMetadata", () => {
    expect(refusal(probeTool({ usage: " " }))).toContain("no non-empty static ToolUsageMetadata");
  });

  it("refuses an unknown tool category", () => {
    expect(refusal(probeTool({ category: "misc" }))).toContain("category 'misc' is not a known tool category");
  });

  it("refuses a schema without a description", () => {
    expect(refusal(probeTool({ description: " " }))).toContain("non-empty description");
  });

  it("refuses a required name that is not a property", () => {
    const jsonSchema = { properties: goodSchema().parameters.properties, required: ["missing"] };
    expect(refusal(foreignProbeTool({ jsonSchema }))).toContain(
      "requires 'missing', which is not among its properties",
    );
  });

  it("refuses a property without a simple JSON type", () => {
    const args = z.object({ text: z.union([z.string(), z.number()]).describe("Text or a number.") });
    expect(refusal(probeTool({ args }))).toContain("parameter 'text' needs a simple JSON type");
    const jsonSchema = { properties: { text: { description: "d" } }, required: [] };
    expect(refusal(foreignProbeTool({ jsonSchema }))).toContain("parameter 'text' needs a simple JSON type");
  });

  it("refuses a property without a description", () => {
    const args = z.object({ text: z.string() });
    expect(refusal(probeTool({ args }))).toContain("parameter 'text' needs a description");
  });

  it("refuses a duplicate ToolName", () => {
    const registry = new AgentToolRegistry(new RecordingAdminLogger());
    registry.registerTool(probeTool());
    expect(refusal(probeTool(), registry)).toContain("the ToolName 'probe_tool' is already registered");
  });

  it("refuses a ToolName reserved for a tool it does not hold (a production tool, for a client's tools)", () => {
    const registry = new AgentToolRegistry(new RecordingAdminLogger(), undefined, ["probe_tool"]);
    expect(refusal(probeTool(), registry)).toContain("the ToolName 'probe_tool' is already registered");
    expect(refusal(probeTool(), registry.extended([]))).toContain("the ToolName 'probe_tool' is already registered");
    expect(registry.tools).toEqual([]);
  });

  it("logs the refusal with a message naming the tool and the rule", () => {
    const logger = new RecordingAdminLogger();
    const registry = new AgentToolRegistry(logger);
    const message = refusal(probeTool({ category: "misc" }), registry);
    expect(message).toMatch(/^Tool 'probe_tool' \(ProbeTool\) breaks the agent tool contract: /);
    expect(logger.errors).toEqual([
      { tag: "[AgentToolRegistry_RegisterTool]", message, pairs: [["Tool", "probe_tool"]] },
    ]);
  });
});

describe("AgentToolRegistry.registerTool refusals of AgentTool values written by hand", () => {
  it("refuses a tool without getSchema()", () => {
    expect(refusal(handWrittenTool(undefined))).toContain("declares no static getSchema()");
  });

  it("refuses a schema whose type is not 'function'", () => {
    expect(refusal(handWrittenTool(withSchema((s) => ({ ...s, type: "tool" }))))).toContain("type must be 'function'");
  });

  it("refuses a schema whose name is not the ToolName", () => {
    expect(refusal(handWrittenTool(withSchema((s) => ({ ...s, name: "x" }))))).toContain(
      "schema name must be its ToolName",
    );
  });

  it("refuses parameters whose type is not 'object'", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { ...s.parameters, type: "array" } }));
    expect(refusal(handWrittenTool(schema))).toContain("parameters must have type 'object'");
  });

  it("refuses parameters without a properties object", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { type: "object", required: [] } }));
    expect(refusal(handWrittenTool(schema))).toContain("need a 'properties' object");
  });

  it("refuses parameters without a required array", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { type: "object", properties: s.parameters.properties } }));
    expect(refusal(handWrittenTool(schema))).toContain("need a 'required' array");
  });

  it("refuses a schema that changes between calls", () => {
    let calls = 0;
    const schema = () => ({ ...goodSchema(), description: `A probe, call ${++calls}.` });
    expect(refusal(handWrittenTool(schema))).toContain("must return the same schema on every call");
  });
});

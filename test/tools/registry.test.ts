// AgentToolRegistry refuses each kind of malformed tool (TUL-011 §2, §4): one test per rule.
import { describe, expect, it } from "vitest";
import type { AgentToolExecutionContext, OpenAIFunctionToolSchema } from "../../src/tools/contract";
import { InvokeResult } from "../../src/tools/contract";
import { AgentToolContractError, AgentToolRegistry } from "../../src/tools/registry";
import { AgentToolBase } from "../../src/tools/tool-base";
import { RecordingAdminLogger } from "../fixtures/recording-logger";

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

interface ProbeOptions {
  ToolName?: unknown;
  ToolUsageMetadata?: unknown;
  schema?: () => unknown;
  name?: string;
  category?: string;
  noGetSchema?: boolean;
}

/** A tool class whose statics and instance members come from `options`, to break one rule at a time. */
function probeTool(options: ProbeOptions = {}): AgentToolBase {
  class ProbeTool extends AgentToolBase {
    static ToolName = "ToolName" in options ? options.ToolName : "probe_tool";
    static ToolUsageMetadata = "ToolUsageMetadata" in options ? options.ToolUsageMetadata : "Use it to probe.";
    static getSchema = options.noGetSchema ? undefined : (options.schema ?? goodSchema);
    readonly category = options.category ?? "general";
    readonly isToolFullyExecutedOnServer = true;
    protected readonly failureMessage = "ProbeTool failed.";
    override get name(): string {
      return options.name ?? super.name;
    }
    protected async run(_a: string | null | undefined, _c: AgentToolExecutionContext | null | undefined) {
      return InvokeResult.create("{}");
    }
  }
  return new ProbeTool(new RecordingAdminLogger());
}

function refusal(tool: AgentToolBase, registry = new AgentToolRegistry(new RecordingAdminLogger())): string {
  try {
    registry.registerTool(tool);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentToolContractError);
    return (error as Error).message;
  }
  throw new Error("registerTool accepted a malformed tool");
}

const withSchema = (change: (schema: ReturnType<typeof goodSchema>) => unknown) => () => change(goodSchema());

describe("AgentToolRegistry.registerTool refusals", () => {
  it("accepts a well-formed tool", () => {
    const registry = new AgentToolRegistry(new RecordingAdminLogger());
    registry.registerTool(probeTool());
    expect(registry.tools.map((t) => t.name)).toEqual(["probe_tool"]);
  });

  it("refuses a missing or empty ToolName", () => {
    expect(refusal(probeTool({ ToolName: "" }))).toContain("declares no non-empty static ToolName");
    expect(refusal(probeTool({ ToolName: undefined }))).toContain("declares no non-empty static ToolName");
  });

  it("refuses a ToolName that does not match ^[a-zA-Z0-9_-]+$", () => {
    expect(refusal(probeTool({ ToolName: "probe tool!" }))).toContain("must match ^[a-zA-Z0-9_-]+$");
  });

  it("refuses a tool whose name is not its ToolName", () => {
    expect(refusal(probeTool({ name: "other_name" }))).toContain(
      "its name 'other_name' is not its ToolName 'probe_tool'",
    );
  });

  it("refuses a missing or empty ToolUsageMetadata", () => {
    expect(refusal(probeTool({ ToolUsageMetadata: " " }))).toContain("no non-empty static ToolUsageMetadata");
  });

  it("refuses a tool without a static getSchema()", () => {
    expect(refusal(probeTool({ noGetSchema: true }))).toContain("declares no static getSchema()");
  });

  it("refuses an unknown tool category", () => {
    expect(refusal(probeTool({ category: "misc" }))).toContain("category 'misc' is not a known tool category");
  });

  it("refuses a schema whose type is not 'function'", () => {
    expect(refusal(probeTool({ schema: withSchema((s) => ({ ...s, type: "tool" })) }))).toContain(
      "type must be 'function'",
    );
  });

  it("refuses a schema whose name is not the ToolName", () => {
    expect(refusal(probeTool({ schema: withSchema((s) => ({ ...s, name: "x" })) }))).toContain(
      "schema name must be its ToolName",
    );
  });

  it("refuses a schema without a description", () => {
    expect(refusal(probeTool({ schema: withSchema((s) => ({ ...s, description: "" })) }))).toContain(
      "non-empty description",
    );
  });

  it("refuses parameters whose type is not 'object'", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { ...s.parameters, type: "array" } }));
    expect(refusal(probeTool({ schema }))).toContain("parameters must have type 'object'");
  });

  it("refuses parameters without a properties object", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { type: "object", required: [] } }));
    expect(refusal(probeTool({ schema }))).toContain("need a 'properties' object");
  });

  it("refuses parameters without a required array", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { type: "object", properties: s.parameters.properties } }));
    expect(refusal(probeTool({ schema }))).toContain("need a 'required' array");
  });

  it("refuses a required name that is not a property", () => {
    const schema = withSchema((s) => ({ ...s, parameters: { ...s.parameters, required: ["missing"] } }));
    expect(refusal(probeTool({ schema }))).toContain("requires 'missing', which is not among its properties");
  });

  it("refuses a property without a simple JSON type", () => {
    const schema = withSchema((s) => ({
      ...s,
      parameters: { ...s.parameters, properties: { text: { description: "d" } } },
    }));
    expect(refusal(probeTool({ schema }))).toContain("parameter 'text' needs a simple JSON type");
  });

  it("refuses a property without a description", () => {
    const schema = withSchema((s) => ({
      ...s,
      parameters: { ...s.parameters, properties: { text: { type: "string" } } },
    }));
    expect(refusal(probeTool({ schema }))).toContain("parameter 'text' needs a description");
  });

  it("refuses a schema that changes between calls", () => {
    let calls = 0;
    const schema = () => ({ ...goodSchema(), description: `A probe, call ${++calls}.` });
    expect(refusal(probeTool({ schema }))).toContain("must return the same schema on every call");
  });

  it("refuses a duplicate ToolName", () => {
    const registry = new AgentToolRegistry(new RecordingAdminLogger());
    registry.registerTool(probeTool());
    expect(refusal(probeTool(), registry)).toContain("the ToolName 'probe_tool' is already registered");
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

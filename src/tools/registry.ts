// AgentToolRegistry: refuses, at registration, any tool that breaks the TUL-011 contract.
import type { AdminLogger } from "../observability/admin-logger";
import { TOOL_CATEGORIES, type ToolCategory } from "./categories";
import { type AgentTool, TOOL_NAME_PATTERN } from "./contract";
import { isJsonObject } from "./tool-arguments";

/** TUL-011's InvalidOperationException: a malformed or duplicate tool. */
export class AgentToolContractError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentToolContractError";
  }
}

const SIMPLE_JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array"]);

function nonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value.trim().length > 0;
}

/**
 * The rule a tool breaks, or null. Checked in this order; the first broken rule is reported. The words are
 * TUL-011's: its `ToolName` is the tool's `name`, its `ToolUsageMetadata` the `toolUsageMetadata`, its
 * `GetSchema()` the `getSchema()` (constants of the tool, as TUL-011's `const` and `static` members are).
 */
function findContractViolation(tool: AgentTool, categories: readonly ToolCategory[]): string | null {
  const toolName: unknown = tool.name;
  if (!nonEmptyString(toolName)) return "it declares no non-empty static ToolName";
  if (!TOOL_NAME_PATTERN.test(toolName)) return `its ToolName must match ${TOOL_NAME_PATTERN.source}`;
  if (!nonEmptyString(tool.toolUsageMetadata)) return "it declares no non-empty static ToolUsageMetadata";
  if (typeof tool.getSchema !== "function") return "it declares no static getSchema()";
  if (typeof tool.isToolFullyExecutedOnServer !== "boolean") return "isToolFullyExecutedOnServer must be a boolean";
  if (!categories.some((c) => c.id === tool.category))
    return `its category '${String(tool.category)}' is not a known tool category`;

  const schema: unknown = tool.getSchema();
  if (!isJsonObject(schema)) return "getSchema() must return an object";
  if (schema.type !== "function") return "its schema type must be 'function'";
  if (schema.name !== toolName) return "its schema name must be its ToolName";
  if (!nonEmptyString(schema.description)) return "its schema needs a non-empty description";
  const parameters = schema.parameters;
  if (!isJsonObject(parameters) || parameters.type !== "object") return "its schema parameters must have type 'object'";
  const properties = parameters.properties;
  if (!isJsonObject(properties)) return "its schema parameters need a 'properties' object";
  if (!Array.isArray(parameters.required)) return "its schema parameters need a 'required' array";
  for (const name of parameters.required) {
    if (typeof name !== "string" || !(name in properties)) {
      return `its schema requires '${String(name)}', which is not among its properties`;
    }
  }
  for (const [name, property] of Object.entries(properties)) {
    if (!isJsonObject(property) || typeof property.type !== "string" || !SIMPLE_JSON_TYPES.has(property.type)) {
      return `its parameter '${name}' needs a simple JSON type (string, number, integer, boolean, object, array)`;
    }
    if (!nonEmptyString(property.description)) return `its parameter '${name}' needs a description`;
  }
  if (JSON.stringify(schema) !== JSON.stringify(tool.getSchema())) {
    return "getSchema() must return the same schema on every call";
  }
  return null;
}

export class AgentToolRegistry {
  private readonly byName = new Map<string, AgentTool>();
  private readonly reserved: ReadonlySet<string>;

  /**
   * @param categories the categories a tool may name: the built-in ones, and (for a session whose mode offers
   * MCP tools) one per MCP server.
   * @param reservedNames ToolNames taken without their tools being here (the production tools', where a
   * client's own tools are checked): registering one is refused as a duplicate.
   */
  constructor(
    private readonly logger: AdminLogger,
    readonly categories: readonly ToolCategory[] = TOOL_CATEGORIES,
    reservedNames: readonly string[] = [],
  ) {
    this.reserved = new Set(reservedNames);
  }

  /** TUL-011 §2's RegisterTool<T>(): logs and throws if the tool is malformed or its name is taken. */
  registerTool(tool: AgentTool): void {
    const name: unknown = tool.name;
    const label = nonEmptyString(name) ? name : tool.label;
    let violation = findContractViolation(tool, this.categories);
    if (!violation && (this.byName.has(tool.name) || this.reserved.has(tool.name))) {
      violation = `the ToolName '${tool.name}' is already registered`;
    }
    if (violation) {
      // The tool's own label beside its name when it says more ("HelloWorldTool"), not when it repeats the name.
      const said = tool.label && !tool.label.includes(label) ? ` (${tool.label})` : "";
      const message = `Tool '${label}'${said} breaks the agent tool contract: ${violation}.`;
      this.logger.addError("[AgentToolRegistry_RegisterTool]", message, [["Tool", label]]);
      throw new AgentToolContractError(message);
    }
    this.byName.set(tool.name, tool);
  }

  /**
   * A new registry holding this one's tools (already checked) that also takes tools of `categories`: the
   * registry of one request whose mode offers MCP tools, beside the object's built-in tools.
   */
  extended(categories: readonly ToolCategory[]): AgentToolRegistry {
    const registry = new AgentToolRegistry(this.logger, [...this.categories, ...categories], [...this.reserved]);
    for (const [name, tool] of this.byName) registry.byName.set(name, tool);
    return registry;
  }

  getTool(name: string): AgentTool | undefined {
    return this.byName.get(name);
  }

  hasTool(name: string): boolean {
    return this.byName.has(name);
  }

  /** Registered tools in registration order. */
  get tools(): readonly AgentTool[] {
    return [...this.byName.values()];
  }
}

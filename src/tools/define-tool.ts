// defineTool(): the one way to define an agent tool, in the spirit of the OpenAI Agents SDK's tool(). A
// definition (TUL-011's ToolName, ToolUsageMetadata and arguments, and execute) in; the AgentTool value the
// registry, executor, reasoner and prompt use out. Its execute never throws (TUL-011 §3, AGN-005 §4): blank or
// invalid arguments and caught exceptions become failed InvokeResults, exceptions logged with AGN-005 §7's tag.
import type { z } from "zod";
import { type AdminLogger, JsonAdminLogger } from "../observability/admin-logger";
import { type AgentTool, type AgentToolExecutionContext, exceptionTag, InvokeResult } from "./contract";
import { type ForeignObjectSchema, foreignFunctionSchema, readForeignArguments } from "./foreign-schema";
import { functionToolSchema } from "./function-schema";
import { isBlank, type ParsedArguments, parseToolArguments } from "./tool-arguments";

/** Arguments someone else described (an MCP server's tool, a client's own) with a JSON schema, read as it says. */
export interface ForeignArgs {
  jsonSchema: ForeignObjectSchema;
}

/** A tool's arguments: a zod object for our own tools (their JSON schema is made from it), or a foreign schema. */
export type ToolArgs = z.ZodObject | ForeignArgs;

/**
 * What execute returns: its result, an object the definition serialises to JSON (TUL-011 §3), or an
 * InvokeResult it made itself (a failure with its message, a result with effects, a result already JSON).
 */
export type ToolOutput = InvokeResult<string> | object;

/** A tool, as defined: `A` its arguments' schema, `T` what execute receives once they are read. */
export interface ToolDefinition<A extends ToolArgs, T> {
  /** TUL-011's ToolName: `^[a-zA-Z0-9_-]+$`, unique; the name the model calls. */
  name: string;
  /** TUL-011's ToolUsageMetadata: when the model should call the tool. */
  usage: string;
  /** The schema's short description (TUL-011 §4); the usage when absent. */
  description?: string;
  /** The name the tool's messages use ("HelloWorldTool"); the ToolName when absent. */
  label?: string;
  /** The tool category the prompt lists it under. */
  category: string;
  args: A;
  /** AGN-005: "server" is server-final; "client" is a server preflight whose final step a client carries out. */
  runsOn: "server" | "client";
  /**
   * The logger a tool is given with its services (TUL-011 §2), where its caught exceptions are logged; a tool
   * defined without one logs them to the context's logger.
   */
  logger?: AdminLogger;
  /** The call waits for a person's approval before it runs. */
  needsApproval?: boolean;
  /**
   * Safe to run again after a restart cut a started call off: it only reads, or twice does what once does. False
   * when absent; a client-final tool's preflight only checks and shapes, so it always is.
   */
  repeatable?: boolean;
  /** Higher stays in the prompt longer when the tools are trimmed to a budget; 50 when absent. */
  priority?: number;
  /** The answer to a caught exception (its details are logged, not returned); "<label> failed unexpectedly." */
  failureMessage?: string;
  /** Blank arguments: refused (the default, "<label> requires a non-empty arguments object."), or read as `{}`. */
  blankArguments?: "refuse" | "empty";
  /** A problem with the context, refused before the arguments are read (TUL-007 §3.4's order), or null. */
  checkContext?(context: AgentToolExecutionContext | null | undefined): string | null;
  /** Client-final tools: the shape of the result the client sends back. */
  clientResult?: z.ZodType;
  /** Client-final tools: whether a client's result answers the request the preflight prepared, or what is wrong. */
  checkClientResult?(preparedJson: string, result: unknown): string | null;
  execute(
    args: T,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): ToolOutput | Promise<ToolOutput>;
}

export function defineTool<S extends z.ZodObject>(definition: ToolDefinition<S, z.output<S>>): AgentTool;
export function defineTool(definition: ToolDefinition<ForeignArgs, Record<string, unknown>>): AgentTool;
export function defineTool(definition: ToolDefinition<ToolArgs, unknown>): AgentTool {
  const { name, usage, args, logger, checkContext } = definition;
  const label = definition.label ?? name;
  const description = definition.description ?? usage;
  const failureMessage = definition.failureMessage ?? `${label} failed unexpectedly.`;
  const refuseBlank = (definition.blankArguments ?? "refuse") === "refuse";
  // TUL-011's GetSchema(): made once, here (getSchema hands out copies, so no caller changes the one made).
  const schema = isForeign(args)
    ? foreignFunctionSchema(name, description, args.jsonSchema)
    : functionToolSchema(name, description, args);
  const readArguments = (argumentsJson: string): ParsedArguments<unknown> =>
    isForeign(args)
      ? readForeignArguments(label, argumentsJson, args.jsonSchema)
      : parseToolArguments(argumentsJson, args, label);

  return {
    name,
    label,
    toolUsageMetadata: usage,
    category: definition.category,
    isToolFullyExecutedOnServer: definition.runsOn === "server",
    requiresApproval: definition.needsApproval ?? false,
    repeatable: definition.runsOn === "client" || (definition.repeatable ?? false),
    priority: definition.priority ?? 50,
    clientResultSchema: definition.clientResult,
    checkClientResult: definition.checkClientResult,
    getSchema: () => structuredClone(schema),

    checkArguments(argumentsJson) {
      const read = readArguments(isBlank(argumentsJson) ? "{}" : argumentsJson);
      return read.ok ? null : read.message;
    },

    async execute(argumentsJson, context, signal) {
      try {
        if (signal?.aborted) return InvokeResult.fromError(`${label} was cancelled with the turn.`);
        const blank = argumentsJson === null || argumentsJson === undefined || isBlank(argumentsJson);
        if (blank && refuseBlank) return InvokeResult.fromError(`${label} requires a non-empty arguments object.`);
        const contextProblem = checkContext?.(context);
        if (contextProblem) return InvokeResult.fromError(contextProblem);
        const read = readArguments(blank ? "{}" : argumentsJson);
        if (!read.ok) return InvokeResult.fromError(read.message);
        return asInvokeResult(await definition.execute(read.args, context, signal));
      } catch (error) {
        const log = logger ?? readSafely(() => context?.logger) ?? UNATTENDED;
        log.addException(exceptionTag(name), error, [
          ["SessionId", readSafely(() => context?.sessionId) ?? ""],
          ["ConversationId", readSafely(() => context?.conversationId) ?? ""],
        ]);
        return InvokeResult.fromError(failureMessage);
      }
    },
  };
}

/** Where an exception is logged when neither the tool nor its context has a logger (a call outside a turn). */
const UNATTENDED: AdminLogger = new JsonAdminLogger();

function isForeign(args: ToolArgs): args is ForeignArgs {
  return "jsonSchema" in args;
}

const INVOKE_RESULT_KEYS: ReadonlySet<string> = new Set(["successful", "result", "errorMessage", "effects"]);

/** Whether execute made the InvokeResult itself: its fields, and no others. */
function isInvokeResult(output: ToolOutput): output is InvokeResult<string> {
  return (
    "successful" in output &&
    typeof output.successful === "boolean" &&
    Object.keys(output).every((key) => INVOKE_RESULT_KEYS.has(key))
  );
}

/** An InvokeResult execute made is passed on; any other value is the result, serialised. */
function asInvokeResult(output: ToolOutput): InvokeResult<string> {
  return isInvokeResult(output) ? output : InvokeResult.create(JSON.stringify(output));
}

/** Reads a context field for a log line; a context that throws must not break the failure path. */
function readSafely<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

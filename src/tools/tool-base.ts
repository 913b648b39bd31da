// AgentToolBase: the parts every tool shares (statics read back, exceptions caught and logged), and
// TypedAgentTool, which parses a tool's arguments with its zod schema once, so no tool re-checks JSON or nulls.
import type { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import {
  type AgentTool,
  type AgentToolExecutionContext,
  type AgentToolStatics,
  exceptionTag,
  InvokeResult,
  type OpenAIFunctionToolSchema,
} from "./contract";
import { isBlank, parseToolArguments } from "./tool-arguments";

/**
 * Subclasses declare `static readonly ToolName`, `static readonly ToolUsageMetadata` and
 * `static getSchema()` (TUL-011 §2) and implement `run`. `execute` never throws.
 */
export abstract class AgentToolBase implements AgentTool {
  abstract readonly category: string;
  abstract readonly isToolFullyExecutedOnServer: boolean;
  readonly requiresApproval: boolean = false;
  readonly priority: number = 50;
  /** The generic failure message for an unexpected exception (details are logged, not returned). */
  protected abstract readonly failureMessage: string;

  constructor(protected readonly logger: AdminLogger) {}

  private get statics(): Partial<AgentToolStatics> {
    return this.constructor as Partial<AgentToolStatics>;
  }

  get name(): string {
    return this.statics.ToolName ?? "";
  }

  get toolUsageMetadata(): string {
    return this.statics.ToolUsageMetadata ?? "";
  }

  getSchema(): OpenAIFunctionToolSchema {
    const getSchema = this.statics.getSchema;
    if (typeof getSchema !== "function") throw new Error(`${this.constructor.name} declares no static getSchema()`);
    return getSchema.call(this.constructor);
  }

  async execute(
    argumentsJson: string | null | undefined,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>> {
    try {
      signal?.throwIfAborted();
      return await this.run(argumentsJson, context, signal);
    } catch (error) {
      this.logger.addException(exceptionTag(this.name), error, [
        ["SessionId", readSafely(() => context?.sessionId) ?? ""],
        ["ConversationId", readSafely(() => context?.conversationId) ?? ""],
      ]);
      return InvokeResult.fromError(this.failureMessage);
    }
  }

  protected abstract run(
    argumentsJson: string | null | undefined,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>>;
}

/**
 * A tool whose arguments are one zod schema: `execute` refuses empty arguments (`<Label> requires a non-empty
 * arguments object.`, TUL-007's wording for every tool), runs `checkContext`, parses the JSON with the schema
 * (its issues in the schema's own messages), and hands `runWith` typed arguments. `checkArguments` is the
 * same parse without running, for a call that waits for approval.
 */
export abstract class TypedAgentTool<S extends z.ZodType> extends AgentToolBase {
  /** The tool's arguments, in its specification's field order (issues are reported in that order). */
  protected abstract readonly argumentsSchema: S;
  /** The name its messages use ("ModeChangeTool"). */
  protected abstract readonly label: string;
  /** Empty arguments: refused (the default), or read as `{}` for a tool with no required argument. */
  protected readonly blankArguments: "refuse" | "empty" = "refuse";

  /** A context problem to refuse before the arguments are read (TUL-007 §3.4's order), or null. */
  protected checkContext(_context: AgentToolExecutionContext | null | undefined): string | null {
    return null;
  }

  protected abstract runWith(
    args: z.output<S>,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>>;

  checkArguments(argumentsJson: string): string | null {
    const parsed = parseToolArguments(isBlank(argumentsJson) ? "{}" : argumentsJson, this.argumentsSchema, this.label);
    return parsed.ok ? null : parsed.message;
  }

  protected async run(
    argumentsJson: string | null | undefined,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>> {
    const blank = argumentsJson === null || argumentsJson === undefined || isBlank(argumentsJson);
    if (blank && this.blankArguments === "refuse") {
      return InvokeResult.fromError(`${this.label} requires a non-empty arguments object.`);
    }
    const contextProblem = this.checkContext(context);
    if (contextProblem) return InvokeResult.fromError(contextProblem);
    const parsed = parseToolArguments(blank ? "{}" : (argumentsJson ?? "{}"), this.argumentsSchema, this.label);
    if (!parsed.ok) return InvokeResult.fromError(parsed.message);
    return this.runWith(parsed.args, context, signal);
  }
}

/** Reads a context field for a log line; a context that throws must not break the failure path. */
function readSafely<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

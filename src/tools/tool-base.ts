// AgentToolBase: the parts every tool shares (statics read back, exceptions caught and logged).
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
  /** The tool's zod arguments and the name its messages use ("ModeChangeTool"), for `checkArguments`. */
  protected readonly argumentsSpec?: { schema: z.ZodType; label: string };

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
        ["SessionId", readSafely(() => context?.sessionId)],
        ["ConversationId", readSafely(() => context?.conversationId)],
      ]);
      return InvokeResult.fromError(this.describeFailure(error));
    }
  }

  /** The arguments' problem as `run` would report it, without running; null when they are valid. */
  checkArguments(argumentsJson: string): string | null {
    const spec = this.argumentsSpec;
    if (!spec) return null;
    const parsed = parseToolArguments(isBlank(argumentsJson) ? "{}" : argumentsJson, spec.schema, spec.label);
    return parsed.ok ? null : parsed.message;
  }

  /** What the model is told when `run` threw; never a stack or internal detail. */
  protected describeFailure(_error: unknown): string {
    return this.failureMessage;
  }

  protected abstract run(
    argumentsJson: string | null | undefined,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>>;
}

/** Reads a context field for a log line; a context that throws must not break the failure path. */
function readSafely(read: () => string | undefined): string {
  try {
    return read() ?? "";
  } catch {
    return "(unreadable)";
  }
}

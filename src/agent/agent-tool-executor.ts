// AgentToolExecutor (AGN-005 §5): resolves each model call to its tool, runs it, maps the outcome onto AgentToolCall.
import type { ModelToolCall } from "../llm/chat-model";
import type { AdminLogger } from "../observability/admin-logger";
import type { AgentToolExecutionContext } from "../tools/contract";
import type { AgentToolRegistry } from "../tools/registry";
import type { StoredToolCall } from "./agent-tool-call";

export interface PlanContext {
  turnId: string;
  batch: number;
  position: number;
  terminate: boolean;
  /** Tools offered in the session's mode for this request. */
  offered: ReadonlySet<string>;
  /** Tools the mode makes wait for approval. */
  approvalRequired: ReadonlySet<string>;
}

export class AgentToolExecutor {
  constructor(
    private readonly registry: AgentToolRegistry,
    private readonly logger: AdminLogger,
  ) {}

  /** The stored call for a model call: refused at once, waiting for approval, or ready to run. */
  plan(call: ModelToolCall, ctx: PlanContext): StoredToolCall {
    const tool = this.registry.getTool(call.name);
    const stored: StoredToolCall = {
      id: call.id,
      name: call.name,
      argumentsJson: call.arguments,
      isServerTool: true,
      wasExecuted: false,
      requiresClientExecution: tool ? !tool.isToolFullyExecutedOnServer : false,
      requiresApproval: false,
      approval: null,
      resultJson: null,
      errorMessage: null,
      turnId: ctx.turnId,
      batch: ctx.batch,
      position: ctx.position,
      state: "settled",
      terminate: ctx.terminate,
    };
    if (!tool || !ctx.offered.has(call.name)) {
      const available = [...ctx.offered].sort().join(", ");
      stored.errorMessage = tool
        ? `Tool '${call.name}' is not offered in this mode. Available tools: ${available}.`
        : `Unknown tool '${call.name}'. Available tools: ${available}.`;
      return stored;
    }
    if (tool.requiresApproval || ctx.approvalRequired.has(call.name)) {
      return { ...stored, requiresApproval: true, approval: "pending", state: "awaiting_approval" };
    }
    return { ...stored, state: "ready" };
  }

  /** AGN-005's ExecuteServerToolAsync: runs the tool (server-final) or its preflight (client-final). Never throws. */
  async executeServerTool(
    call: StoredToolCall,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<StoredToolCall> {
    const tool = this.registry.getTool(call.name);
    if (!tool) return { ...call, state: "settled", errorMessage: `Unknown tool '${call.name}'.` };
    const outcome = await tool.execute(call.argumentsJson, context, signal);
    if (!outcome.successful) {
      this.logger.addCustomEvent("Warning", `${tool.name}_ExecuteAsync`, "Tool execution failed.", [
        ["SessionId", context.sessionId],
        ["ConversationId", context.conversationId],
        ["ToolCallId", call.id],
        ["Error", outcome.errorMessage ?? ""],
      ]);
      return {
        ...call,
        wasExecuted: false,
        state: "settled",
        resultJson: null,
        errorMessage: outcome.errorMessage ?? "The tool failed.",
      };
    }
    const resultJson = outcome.result ?? "";
    if (tool.isToolFullyExecutedOnServer)
      return { ...call, wasExecuted: true, state: "settled", resultJson, errorMessage: null };
    return {
      ...call,
      wasExecuted: true,
      requiresClientExecution: true,
      state: "awaiting_client",
      resultJson,
      errorMessage: null,
    };
  }

  /** Checks a client's result against the tool's declared result schema; returns the problem, or null. */
  checkClientResult(call: StoredToolCall, resultJson: string): string | null {
    let value: unknown;
    try {
      value = JSON.parse(resultJson);
    } catch {
      return `the result for ${call.id} is not valid JSON`;
    }
    const schema = this.registry.getTool(call.name)?.clientResultSchema;
    if (!schema) return null;
    const parsed = schema.safeParse(value);
    if (parsed.success) return null;
    const issue = parsed.error.issues[0];
    return `the result for ${call.id} does not match ${call.name}'s result: '${issue?.path.join(".") ?? ""}' ${issue?.message ?? "is invalid"}`;
  }
}

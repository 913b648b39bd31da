// AgentToolExecutor (AGN-005 §5): resolves each model call to its tool, runs it, maps the outcome onto AgentToolCall.

import type { ModelToolCall } from "../llm/chat-model";
import type { AdminLogger } from "../observability/admin-logger";
import { quoted } from "../quote";
import { type AgentTool, type AgentToolExecutionContext, exceptionTag, type InvokeResult } from "../tools/contract";
import type { AgentToolRegistry } from "../tools/registry";
import { fieldMessage, firstProblem } from "../zod-issues";
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
      ...(tool?.mcp ? { mcp: { ...tool.mcp } } : {}),
    };
    if (!tool || !ctx.offered.has(call.name)) {
      const available = [...ctx.offered].sort().join(", ");
      stored.errorMessage = tool
        ? `Tool ${quoted(call.name)} is not offered in this mode. Available tools: ${available}.`
        : `Unknown tool ${quoted(call.name)}. Available tools: ${available}.`;
      return stored;
    }
    if (tool.requiresApproval || ctx.approvalRequired.has(call.name)) {
      return { ...stored, requiresApproval: true, approval: "pending", state: "awaiting_approval" };
    }
    return { ...stored, state: "ready" };
  }

  /**
   * A call that waits for a person is checked before anyone is asked. A client-final tool runs its
   * preflight now (it has no side effect; the prepared request is kept for after the approval), a
   * server-final tool checks its arguments. A refused call is settled with the reason and never shown
   * for approval. Never throws.
   */
  async checkBeforeApproval(
    call: StoredToolCall,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<StoredToolCall> {
    const tool = this.registry.getTool(call.name);
    if (!tool) return { ...call, state: "settled", approval: null, errorMessage: `Unknown tool '${call.name}'.` };
    if (!tool.isToolFullyExecutedOnServer) {
      const prepared = await this.executeServerTool(call, context, signal);
      return prepared.state === "settled"
        ? { ...prepared, approval: null }
        : { ...prepared, state: "awaiting_approval" };
    }
    let problem: string | null = null;
    try {
      problem = tool.checkArguments?.(call.argumentsJson) ?? null;
    } catch (error) {
      this.logger.addException(exceptionTag(tool.name), error, [["ToolCallId", call.id]]);
      problem = `${tool.name} failed unexpectedly.`;
    }
    return problem === null ? call : { ...call, state: "settled", approval: null, errorMessage: problem };
  }

  /**
   * AGN-005's ExecuteServerToolAsync: runs the tool (server-final) or its preflight (client-final).
   * Never throws (AGN-005 §5.4), whatever the tool does: an exception, or something that is not an
   * InvokeResult, becomes a failed call with a generic message, and the exception is logged.
   */
  async executeServerTool(
    call: StoredToolCall,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<StoredToolCall> {
    const tool = this.registry.getTool(call.name);
    if (!tool) return { ...call, state: "settled", errorMessage: `Unknown tool '${call.name}'.` };
    const outcome = await this.invoke(tool, call, context, signal);
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
    const effects = outcome.effects ? { effects: outcome.effects } : {};
    if (tool.isToolFullyExecutedOnServer)
      return { ...call, ...effects, wasExecuted: true, state: "settled", resultJson, errorMessage: null };
    return {
      ...call,
      wasExecuted: true,
      requiresClientExecution: true,
      state: "awaiting_client",
      resultJson,
      errorMessage: null,
    };
  }

  /** Whether a call a restart cut off may run again (its tool only reads, or is idempotent). */
  isRepeatable(call: StoredToolCall): boolean {
    return this.registry.getTool(call.name)?.repeatable ?? false;
  }

  /**
   * Checks a client's result against the tool's declared result schema, and that it answers the request
   * the preflight prepared (a read's result is for the path that was asked for); returns the problem, or null.
   */
  checkClientResult(call: StoredToolCall, resultJson: string): string | null {
    let value: unknown;
    try {
      value = JSON.parse(resultJson);
    } catch {
      return `the result for ${call.id} is not valid JSON`;
    }
    const tool = this.registry.getTool(call.name);
    const schema = tool?.clientResultSchema;
    if (schema) {
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        const problem = firstProblem(parsed.error);
        return `the result for ${call.id} does not match ${call.name}'s result: ${fieldMessage(problem, "result")}`;
      }
      value = parsed.data;
    }
    try {
      const problem = tool?.checkClientResult?.(call.resultJson ?? "", value) ?? null;
      return problem === null ? null : `the result for ${call.id} ${problem}`;
    } catch (error) {
      this.logger.addException(exceptionTag(call.name), error, [["ToolCallId", call.id]]);
      return `the result for ${call.id} could not be checked`;
    }
  }

  private async invoke(
    tool: AgentTool,
    call: StoredToolCall,
    context: AgentToolExecutionContext,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>> {
    const failed = { successful: false, errorMessage: `${tool.name} failed unexpectedly.` };
    try {
      const outcome: unknown = await tool.execute(call.argumentsJson, context, signal);
      if (isInvokeResult(outcome)) return outcome;
      this.logger.addError(exceptionTag(tool.name), "The tool returned something that is not an InvokeResult.", [
        ["ToolCallId", call.id],
      ]);
      return failed;
    } catch (error) {
      this.logger.addException(exceptionTag(tool.name), error, [
        ["SessionId", context.sessionId],
        ["ToolCallId", call.id],
      ]);
      return failed;
    }
  }
}

function isInvokeResult(value: unknown): value is InvokeResult<string> {
  if (typeof value !== "object" || value === null || !("successful" in value)) return false;
  if (typeof value.successful !== "boolean") return false;
  const result = "result" in value ? value.result : undefined;
  const error = "errorMessage" in value ? value.errorMessage : undefined;
  return (result === undefined || typeof result === "string") && (error === undefined || typeof error === "string");
}

// The agent tool contract (TUL-011, AGN-005 §4): AgentTool, InvokeResult, AgentToolExecutionContext.
import type { z } from "zod";
import type { AdminLogger } from "../observability/admin-logger";
import type { ElicitationAnswer } from "../wire/elicitation";
import type { ElicitationRequest } from "./elicitation";

/**
 * What a tool's success did besides its result, for the loop to apply (the loop names no tool): a change of
 * the session's mode (TUL-007), and whether the user wants the new work in a new session.
 */
export type ToolEffect = { type: "mode_changed"; to: string; reason: string; branch: boolean };

/** TUL-011's `InvokeResult<string>`: a value or a human-readable error, never a thrown exception. */
export interface InvokeResult<T> {
  successful: boolean;
  result?: T;
  errorMessage?: string;
  /** Typed effects of a successful call, applied by the loop. */
  effects?: ToolEffect[];
}

export const InvokeResult = {
  create<T>(result: T, effects?: ToolEffect[]): InvokeResult<T> {
    return effects && effects.length > 0 ? { successful: true, result, effects } : { successful: true, result };
  },
  fromError<T = string>(errorMessage: string): InvokeResult<T> {
    return { successful: false, errorMessage };
  },
};

/** Who and where a tool runs for. Tools take `sessionId`, `org` and `user` from here, never from arguments. */
export interface AgentToolExecutionContext {
  sessionId: string;
  conversationId: string;
  org: string;
  user: string;
  /** The session's current mode key. */
  mode: string;
  logger: AdminLogger;
  /** Asks the user for input while the call waits (the turn pauses); absent where no one can answer. */
  elicit?: (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationAnswer>;
  /** The tool call this context is for (its id), when a turn runs it. */
  toolCallId?: string;
  /** The turn the call is part of, when a turn runs it (a saved memory's source is its session and turn). */
  turnId?: string;
}

/** OpenAI-style function tool schema (TUL-011 §4). */
export interface OpenAIFunctionToolSchema {
  type: "function";
  name: string;
  description: string;
  parameters: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required: string[];
    additionalProperties?: boolean;
  };
}

/**
 * AGN-005's `IAgentTool`, as a value: every tool the model can call has one, server-final or client-final.
 * `defineTool()` (define-tool.ts) makes it; AgentToolRegistry.registerTool checks it against TUL-011.
 */
export interface AgentTool {
  /** TUL-011's `ToolName` (`^[a-zA-Z0-9_-]+$`, unique): the name the model calls, and its schema's name. */
  readonly name: string;
  /** The name the tool's messages and contract errors use ("ModeChangeTool"). */
  readonly label: string;
  /** TUL-011's `ToolUsageMetadata`: when the model should call the tool. */
  readonly toolUsageMetadata: string;
  /** The tool category it is listed under in the system prompt (design document, Decision 5). */
  readonly category: string;
  /**
   * true: the tool validates and performs its final behaviour on the server.
   * false: it runs a server preflight (validation, shaping) and a client executes the final step.
   */
  readonly isToolFullyExecutedOnServer: boolean;
  /** The call pauses for a person's approval before it runs. */
  readonly requiresApproval: boolean;
  /**
   * Safe to run again when a call that had started was cut off by a restart of the session's object (it only
   * reads, or running it twice does what running it once does: MCP's readOnlyHint or idempotentHint). A call
   * of a tool that is not is never run twice; the model is told it was interrupted.
   */
  readonly repeatable: boolean;
  /** Higher stays in the prompt longer when the tool definitions must be trimmed to a budget. */
  readonly priority: number;
  /** Client-final tools: the shape of the result the client sends back, checked before the loop uses it. */
  readonly clientResultSchema?: z.ZodType;
  /** A tool of a remote MCP server: which server and which of its tools (for the approval dialog and frames). */
  readonly mcp?: { server: string; tool: string };
  /**
   * Checks the arguments without acting (for a server-final call that waits for approval, so a call that
   * would be refused never reaches a person); the problem as the tool would report it, or null.
   */
  checkArguments?(argumentsJson: string): string | null;
  /**
   * Client-final tools: whether a (schema-valid) client result answers the request the preflight prepared
   * (`preparedJson`); what is wrong with it ("is for 'b.txt', not 'a.txt'"), or null.
   */
  checkClientResult?(preparedJson: string, result: unknown): string | null;
  /** TUL-011's `GetSchema()`: the OpenAI function schema, the same JSON on every call. */
  getSchema(): OpenAIFunctionToolSchema;
  /** Never throws: validation failures and caught exceptions are failed results. */
  execute(
    argumentsJson: string | null | undefined,
    context: AgentToolExecutionContext | null | undefined,
    signal?: AbortSignal,
  ): Promise<InvokeResult<string>>;
}

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]+$/;

/** The tag AGN-005 §7 fixes for a tool's caught exceptions. */
export function exceptionTag(toolName: string): string {
  return `[${toolName}_ExecuteAsync__Exception]`;
}

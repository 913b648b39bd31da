// What a turn reports, over HTTP, the WebSocket and the OpenAI and MCP doors: its tool calls (AgentToolCall,
// AGN-005 §5.3), its outcome (AgentExecuteResponse), the tokens it used, the session's conversation and the
// record of each turn. Each shape is one zod schema; the types are inferred from it.
import { z } from "zod";
import { StoredAttachment } from "./attachments";
import { ElicitationSchema } from "./elicitation";

export const TokenUsage = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  totalTokens: z.number(),
  /**
   * Of `promptTokens`, those read from the provider's prompt cache (OpenAI's `prompt_tokens_details.cached_tokens`,
   * Anthropic's `cache_read_input_tokens`). `promptTokens` always counts every input token, cached or not.
   */
  cachedInputTokens: z.number().optional(),
  /** Of `promptTokens`, those written to the provider's prompt cache (Anthropic's `cache_creation_input_tokens`). */
  cacheWriteInputTokens: z.number().optional(),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

/** Two calls' usage together (a turn's); the cache's counts are kept only when either call reported them. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum = (x: number | undefined, y: number | undefined) =>
    x === undefined && y === undefined ? {} : { value: (x ?? 0) + (y ?? 0) };
  const cached = sum(a.cachedInputTokens, b.cachedInputTokens);
  const written = sum(a.cacheWriteInputTokens, b.cacheWriteInputTokens);
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...("value" in cached ? { cachedInputTokens: cached.value } : {}),
    ...("value" in written ? { cacheWriteInputTokens: written.value } : {}),
  };
}

export const SessionStatus = z.enum(["idle", "running", "awaiting_approval", "awaiting_client"]);
export type SessionStatus = z.infer<typeof SessionStatus>;

/**
 * Why a message is in the conversation, beside its role. `stopped`: what the model had streamed of its answer when
 * the person stopped the turn (kept, as a chat app keeps it, and marked so).
 */
export const MessageKind = z.enum(["message", "tool_result", "correction", "workflow", "answer", "stopped"]);
export type MessageKind = z.infer<typeof MessageKind>;

export const ModelToolCallShape = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

export const ConversationMessage = z.object({
  seq: z.number().int(),
  turnId: z.string(),
  role: z.enum(["user", "assistant", "tool"]),
  content: z.string().nullable(),
  toolCalls: z.array(ModelToolCallShape).optional(),
  toolCallId: z.string().optional(),
  /** A user's message's files (text files with their text; images without their data in views and exports). */
  attachments: z.array(StoredAttachment).optional(),
  kind: MessageKind,
  createdAt: z.string(),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

/**
 * What the model is told of the conversation's earlier part, in place of its messages: a summary of every message
 * from `fromSeq` to `toSeq` (each summary takes in the one before it).
 */
export const ConversationSummary = z.object({
  fromSeq: z.number().int(),
  toSeq: z.number().int(),
  text: z.string(),
  createdAt: z.string(),
});
export type ConversationSummary = z.infer<typeof ConversationSummary>;

export const TurnRecord = z.object({
  turnId: z.string(),
  status: z.enum(["completed", "failed", "cancelled"]),
  startedAt: z.string(),
  endedAt: z.string(),
  iterations: z.number().int(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type TurnRecord = z.infer<typeof TurnRecord>;

export const ApprovalState = z.enum(["pending", "approved", "denied"]);
export type ApprovalState = z.infer<typeof ApprovalState>;

/** One call the model made, mapped by the AgentToolExecutor (AGN-005 §5.3). */
export const AgentToolCall = z.object({
  id: z.string(),
  name: z.string(),
  argumentsJson: z.string(),
  /** Always true: every tool is mediated by the server (AGN-005 §3). */
  isServerTool: z.boolean(),
  /** The tool's execute (or, for a client-final tool, its preflight) completed successfully. */
  wasExecuted: z.boolean(),
  /** A client executes the final step (AGN-005 §6.2). */
  requiresClientExecution: z.boolean(),
  requiresApproval: z.boolean(),
  approval: ApprovalState.nullable(),
  /** The result; for a client-final tool waiting on its client (or its approval), the prepared request. */
  resultJson: z.string().nullable(),
  errorMessage: z.string().nullable(),
  /** A tool of a remote MCP server: the server's registered name and the tool's own name there. */
  mcp: z.object({ server: z.string(), tool: z.string() }).optional(),
});
export type AgentToolCall = z.infer<typeof AgentToolCall>;

/**
 * How a request to the session ended. `awaiting_input`: a tool's MCP server asks the user for input (an
 * elicitation); the call waits in the running turn until the answer comes (or the turn is cancelled).
 */
export const TurnOutcome = z.enum([
  "completed",
  "awaiting_approval",
  "awaiting_client",
  "awaiting_input",
  "failed",
  "cancelled",
]);
export type TurnOutcome = z.infer<typeof TurnOutcome>;

export const TurnError = z.object({
  code: z.string(),
  message: z.string(),
  /**
   * With `model_rate_limited` (a 429) or `model_unavailable` (a 503): the seconds the model service asked us to wait
   * (its Retry-After), when it said; passed on as the door's Retry-After.
   */
  retryAfterSeconds: z.number().int().nonnegative().optional(),
});
export type TurnError = z.infer<typeof TurnError>;

/** A tool call's MCP server asks the user for input, in the middle of the call. */
export const PendingElicitation = z.object({
  elicitationId: z.string(),
  toolCallId: z.string(),
  /** The MCP server that asks, and the tool it asks for. */
  server: z.string(),
  tool: z.string(),
  message: z.string(),
  /** A flat JSON schema of the fields asked for (strings, numbers, booleans, enums). */
  requestedSchema: ElicitationSchema,
  /** When the question stops waiting and is answered `cancel`. */
  expiresAt: z.string(),
});
export type PendingElicitation = z.infer<typeof PendingElicitation>;

export const AgentExecuteResponse = z.object({
  sessionId: z.string(),
  status: TurnOutcome,
  mode: z.string(),
  text: z.string(),
  toolCalls: z.array(AgentToolCall),
  iterations: z.number().int(),
  branchSessionId: z.string().optional(),
  error: TurnError.optional(),
  /** With `awaiting_input`: what the user is asked. */
  elicitation: PendingElicitation.optional(),
  /** The tokens the turn's model calls used so far, as the model reported them. */
  usage: TokenUsage.optional(),
});
export type AgentExecuteResponse = z.infer<typeof AgentExecuteResponse>;

/**
 * Where a turn is, as a background turn's caller polls it (`GET /context/sessions/:id/turns/:turnId`): `running`
 * (working, or waiting for the answer to an MCP server's question), `paused` (its approvals or a client's results
 * are awaited), or how it ended.
 */
export const TurnStatusValue = z.enum(["running", "paused", "completed", "failed", "cancelled"]);
export type TurnStatusValue = z.infer<typeof TurnStatusValue>;

export const TurnStatus = z.object({
  sessionId: z.string(),
  turnId: z.string(),
  status: TurnStatusValue,
  startedAt: z.string(),
  /** When it ended; null while it runs or is paused. */
  endedAt: z.string().nullable(),
  /** The model's steps (iterations) so far. */
  steps: z.number().int(),
  /** The agent's answer, once completed; null otherwise. */
  answer: z.string().nullable(),
  /** While paused: the calls awaiting a person's approval, and those awaiting the client's results. */
  pending: z.object({ approvals: z.array(AgentToolCall), clientCalls: z.array(AgentToolCall) }).nullable(),
  /** Why it failed or was cancelled; null otherwise. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type TurnStatus = z.infer<typeof TurnStatus>;

/** A page of a session's turns, newest first; `hasMore`: older ones remain (ask again with `before` = the last id). */
export const TurnPage = z.object({ turns: z.array(TurnStatus), hasMore: z.boolean() });
export type TurnPage = z.infer<typeof TurnPage>;

/** The answer to a turn started in the background (`Prefer: respond-async`): admitted, stored, running. */
export const TurnAccepted = z.object({ sessionId: z.string(), turnId: z.string(), status: z.literal("running") });
export type TurnAccepted = z.infer<typeof TurnAccepted>;

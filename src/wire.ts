// The one wire module: every body and frame REST and the socket share, as zod schemas (types inferred, literal
// lists derived), so the two doors accept, refuse and answer the same shapes. Routes and /openapi.json use them.
import { z } from "zod";
import { AgentExecuteResponse, AgentToolCall, PendingElicitation } from "./agent/agent-tool-call";
import { ConversationMessage, SessionStatus, TurnRecord } from "./agent/turn-store";
import { ElicitationAnswer } from "./tools/elicitation";

export const MAX_MESSAGE_CHARS = 100_000;

/** A person's decision on one call that waits for approval. */
export const ApprovalDecision = z.strictObject({
  toolCallId: z.string().min(1),
  approved: z.boolean(),
  reason: z.string().max(2_000).optional(),
});
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/**
 * A client's result of one client-executed call: exactly one of its result and why it could not run it. A result's
 * size is bounded by the body that carries it: MAX_TOOL_RESULT_BYTES over REST, a frame's limit on the socket.
 */
export const ClientToolResult = z
  .strictObject({
    toolCallId: z.string().min(1),
    resultJson: z.string().optional(),
    errorMessage: z.string().min(1).max(10_000).optional(),
  })
  .refine((r) => (r.resultJson === undefined) !== (r.errorMessage === undefined), {
    error: "needs exactly one of resultJson and errorMessage",
  });
export type ClientToolResult = z.infer<typeof ClientToolResult>;

const content = z.string().trim().min(1, "must not be empty").max(MAX_MESSAGE_CHARS);
const decisions = z.array(ApprovalDecision).min(1, "needs at least one decision");
const results = z.array(ClientToolResult).min(1, "needs at least one result");

// REST bodies.
export const CreateSessionBody = z.strictObject({ mode: z.string().min(1).optional() });
export const MessageBody = z.strictObject({ content });
export const ApprovalsBody = z.strictObject({ decisions });
export const ToolResultsBody = z.strictObject({ results });
/** The user's answer to a question a tool's MCP server asks in the middle of a call. */
export const ElicitationAnswerBody = ElicitationAnswer;
export type ElicitationAnswerBody = z.infer<typeof ElicitationAnswerBody>;

// Client frames: the same fields, the same rules.
export const ClientFrame = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("user_message"), content, clientMessageId: z.string().min(1).max(200) }),
  z.strictObject({ type: z.literal("approval"), decisions }),
  z.strictObject({ type: z.literal("tool_results"), results }),
  z.strictObject({
    type: z.literal("elicitation_response"),
    elicitationId: z.string().min(1),
    ...ElicitationAnswer.shape,
  }),
  z.strictObject({ type: z.literal("cancel") }),
  z.strictObject({ type: z.literal("resume"), afterSeq: z.number().int().min(0) }),
  z.strictObject({ type: z.literal("ping") }),
]);
export type ClientFrame = z.output<typeof ClientFrame>;
export const CLIENT_FRAME_TYPES = ClientFrame.options.map((o) => o.shape.type.value);

// Server frames that record what happened to the session: logged, then sent to every socket.
const turnId = z.string();
export const LoggedFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("turn_started"), turnId, clientMessageId: z.string().nullable() }),
  z.object({ type: z.literal("assistant_delta"), turnId, text: z.string() }),
  /** The model's stream broke after its first byte: drop the last `discardedChars` of the turn's streamed text. */
  z.object({
    type: z.literal("assistant_restarted"),
    turnId,
    discardedChars: z.number().int().min(1),
    failedRoute: z.string(),
    route: z.string(),
  }),
  z.object({ type: z.literal("tool_call_started"), turnId, toolCall: AgentToolCall }),
  z.object({ type: z.literal("tool_call_completed"), turnId, toolCall: AgentToolCall }),
  z.object({ type: z.literal("approval_required"), turnId, toolCalls: z.array(AgentToolCall) }),
  z.object({ type: z.literal("client_tool_required"), turnId, toolCalls: z.array(AgentToolCall) }),
  z.object({
    type: z.literal("mode_changed"),
    turnId: turnId.nullable(),
    from: z.string(),
    to: z.string(),
    reason: z.string(),
    branchSessionId: z.string().optional(),
  }),
  z.object({ type: z.literal("elicitation_required"), turnId, elicitation: PendingElicitation }),
  z.object({
    type: z.literal("elicitation_answered"),
    turnId,
    elicitationId: z.string(),
    toolCallId: z.string(),
    action: ElicitationAnswer.shape.action,
  }),
  z.object({ type: z.literal("turn_completed"), turnId, response: AgentExecuteResponse }),
]);
export type LoggedFrame = z.infer<typeof LoggedFrame>;
export const LOGGED_FRAME_TYPES = LoggedFrame.options.map((o) => o.shape.type.value);

export const SessionStateFrame = z.object({
  type: z.literal("session_state"),
  sessionId: z.string(),
  mode: z.string(),
  status: SessionStatus,
  pendingToolCalls: z.array(AgentToolCall),
  /** The seq of the newest logged frame. */
  lastSeq: z.number().int(),
  turnInFlight: z.boolean(),
  /** A question a tool's MCP server asks the user, waiting for the answer (the turn is running). */
  pendingElicitation: PendingElicitation.optional(),
  /** Set when a resume asked for frames the bounded log no longer has: reload the session with GET. */
  framesMissing: z.boolean().optional(),
  /**
   * While a turn runs: the text its current model call has streamed up to `lastSeq` (the assistant_delta
   * frames since the turn's last tool call, with restarts applied). A page that opens mid-turn draws it,
   * then appends the deltas whose seq is above `lastSeq`.
   */
  streamedText: z.string().optional(),
});
export type SessionStateFrame = z.infer<typeof SessionStateFrame>;

/** Frames for one socket only (not logged): they carry the seq of the newest logged frame. */
export const DirectFrame = z.discriminatedUnion("type", [
  SessionStateFrame,
  z.object({ type: z.literal("error"), code: z.string(), message: z.string() }),
  z.object({ type: z.literal("pong") }),
]);
export type DirectFrame = z.infer<typeof DirectFrame>;
export type ServerFrame = (LoggedFrame | DirectFrame) & { seq: number };

// What REST answers.
export const ModeHistoryEntry = z.object({
  from: z.string(),
  to: z.string(),
  reason: z.string(),
  userId: z.string(),
  at: z.string(),
});
export type ModeHistoryEntry = z.infer<typeof ModeHistoryEntry>;

export const Artifact = z.object({
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  content: z.string(),
  createdAt: z.string(),
});
export type Artifact = z.infer<typeof Artifact>;

export const SessionView = z.object({
  sessionId: z.string(),
  mode: z.string(),
  status: SessionStatus,
  modeHistory: z.array(ModeHistoryEntry),
  pendingToolCalls: z.array(AgentToolCall),
  /** A question a tool's MCP server asks the user, waiting for the answer (the turn is running). */
  pendingElicitation: PendingElicitation.optional(),
  parentSessionId: z.string().nullable(),
  conversation: z.array(ConversationMessage),
  turns: z.array(TurnRecord),
  artifacts: z.array(Artifact),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SessionView = z.infer<typeof SessionView>;

/** One of a caller's sessions as the list shows it (GET /context/sessions). */
export const SessionListEntry = z.object({
  sessionId: z.string(),
  mode: z.string(),
  status: SessionStatus,
  /** The session waits for its user: approvals, a client's results, or an MCP server's question. */
  waitingForUser: z.boolean(),
  /** From the first message (one line, at most 80 characters); null until there is one. */
  title: z.string().nullable(),
  parentSessionId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SessionListEntry = z.infer<typeof SessionListEntry>;

export const SessionList = z.object({
  sessions: z.array(SessionListEntry),
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
});

export const SessionCreated = SessionView.pick({ sessionId: true, mode: true, status: true, createdAt: true });
export const WsTicket = z.object({ ticket: z.string(), expiresAt: z.string() });

export const WorkflowRunResponse = z.object({
  sessionId: z.string(),
  workflowId: z.string(),
  mode: z.string(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type WorkflowRunResponse = z.infer<typeof WorkflowRunResponse>;

// The session's WebSocket frames (docs/protocol.md): what a client sends (the REST bodies' fields, the same
// rules), what the session logs and sends to every socket, and what it sends one socket only. Type lists are
// derived from the schemas; the console's list is generated from LOGGED_FRAME_TYPES.
import { z } from "zod";
import { ElicitationAnswer } from "./elicitation";
import { ApprovalDecisions, ClientToolResults, MessageFields, messageNotEmpty } from "./session";
import { AgentExecuteResponse, AgentToolCall, PendingElicitation, SessionStatus } from "./turn";

// Client frames: the same fields, the same rules.
export const ClientFrame = z.discriminatedUnion("type", [
  z
    .strictObject({
      type: z.literal("user_message"),
      ...MessageFields,
      clientMessageId: z.string().min(1).max(200),
    })
    .refine(...messageNotEmpty),
  z.strictObject({ type: z.literal("approval"), decisions: ApprovalDecisions }),
  z.strictObject({ type: z.literal("tool_results"), results: ClientToolResults }),
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
  /**
   * A restart of the session's object cut the turn off, and it resumes from its last stored step: drop the last
   * `discardedChars` of the turn's streamed text (the cut-off model call's), which the model call made again
   * replaces. `resumes`: the how-manieth resumption this is.
   */
  z.object({
    type: z.literal("turn_resumed"),
    turnId,
    resumes: z.number().int().min(1),
    discardedChars: z.number().int().min(0),
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

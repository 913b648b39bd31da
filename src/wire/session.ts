// The session API's bodies and answers (REST): a message, decisions, tool results, an answer to a question; the
// session's view, its list entry, a workflow's result. The socket's frames carry the same fields (frames.ts).
import { z } from "zod";
import { typedName } from "../typed-name";
import { MessageAttachments } from "./attachments";
import { ElicitationAnswer } from "./elicitation";
import {
  AgentToolCall,
  ApprovalState,
  ConversationMessage,
  ConversationSummary,
  PendingElicitation,
  SessionStatus,
  TurnRecord,
} from "./turn";

export const MAX_MESSAGE_CHARS = 100_000;
/** Messages in the session's view (its newest), and a page of GET .../messages by default and at most. */
export const MESSAGE_PAGE = 50;
export const MAX_MESSAGE_PAGE = 200;
/** Ended turns in the session's view (its newest). */
export const VIEW_TURNS = 50;
/** The characters of the summary's text the session's view carries (the whole one: GET .../summary). */
export const SUMMARY_PREVIEW_CHARS = 2_000;
/** The characters of message JSON the view carries at most (its newest message always, whatever its size). */
export const VIEW_MESSAGE_CHARS = 60_000;

/**
 * The characters of a message's content the session's view carries: a longer one (an answer of any length, on a route
 * that sends no max_tokens) is cut there and marked `truncated`, so the view stays within some 100 KiB; the whole
 * message is at GET .../messages?before=<seq + 1>&limit=1.
 */
export const VIEW_CONTENT_CHARS = 16_000;

/** A message as the session's view shows it: its content cut to VIEW_CONTENT_CHARS, and how long the whole is. */
export const ViewMessage = ConversationMessage.extend({
  /** Present when `content` was cut: the whole content's length in characters. */
  contentChars: z.number().int().optional(),
  /** Present (true) when `content` is the first VIEW_CONTENT_CHARS characters of a longer one. */
  truncated: z.boolean().optional(),
});
export type ViewMessage = z.infer<typeof ViewMessage>;

/** The summary as the session's view shows it: its text cut to SUMMARY_PREVIEW_CHARS, and how long the whole is. */
export const SummaryPreview = ConversationSummary.extend({
  /** The whole summary's length in characters (GET /context/sessions/:id/summary has it all). */
  textChars: z.number().int(),
  /** `text` is the first SUMMARY_PREVIEW_CHARS characters of a longer summary. */
  truncated: z.boolean(),
});
export type SummaryPreview = z.infer<typeof SummaryPreview>;

/** GET /context/sessions/:id/summary: the whole summary the model is sent in place of the earlier conversation. */
export const SessionSummary = z.object({
  sessionId: z.string(),
  /** Null before the first compaction. */
  summary: ConversationSummary.nullable(),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

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

/** The fields REST bodies and client frames share, with the same rules. */
/**
 * A message and its attachments (text files, images): the text may be empty when files go with it. The REST body and
 * the socket's user_message share these fields and this rule.
 */
export const MessageFields = {
  content: z.string().trim().max(MAX_MESSAGE_CHARS),
  attachments: MessageAttachments.optional(),
};
export const messageNotEmpty: [
  (m: { content: string; attachments?: unknown[] | undefined }) => boolean,
  { path: string[]; error: string },
] = [
  (m) => m.content.length > 0 || (m.attachments?.length ?? 0) > 0,
  { path: ["content"], error: "must not be empty" },
];
export const ApprovalDecisions = z.array(ApprovalDecision).min(1, "needs at least one decision");
export const ClientToolResults = z.array(ClientToolResult).min(1, "needs at least one result");

// REST bodies.
export const CreateSessionBody = z.strictObject({
  mode: z.string().min(1).optional(),
  modeVersion: z
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(1, "must be 1 or more")
    .optional()
    .describe(
      "Org admins: pin the session to this version of `mode` (docs/modes.md, Versions); its turns run with that " +
        "version, and its mode cannot change. Without it, the mode's current version each turn.",
    ),
});
/** A new session branched from this one before one of the user's own messages (POST .../branches). */
export const CreateBranchBody = z.strictObject({
  beforeMessage: z
    .number()
    .int()
    .min(1)
    .describe("The seq of one of the user's own messages: the branch has the conversation before it, not it."),
  mode: z.string().min(1).optional().describe("The branch's mode; the source's current mode without it."),
});
export const MessageBody = z.strictObject(MessageFields).refine(...messageNotEmpty);
export const ApprovalsBody = z.strictObject({ decisions: ApprovalDecisions });
export const ToolResultsBody = z.strictObject({ results: ClientToolResults });
/** The user's answer to a question a tool's MCP server asks in the middle of a call. */
export const ElicitationAnswerBody = ElicitationAnswer;
export type ElicitationAnswerBody = z.infer<typeof ElicitationAnswerBody>;

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

/**
 * Where a session branched from (POST /context/sessions/:id/branches): the session, and the seq there of the user's
 * message the branch was started before (the branch has the conversation before it). Sessions with the same origin
 * are alternatives to each other and to the source from that message on. Not the branch of `agent_change_mode`
 * (TUL-007, `branch: true`): that one is a new session in another mode, linked by `parentSessionId`, with no
 * conversation copied.
 */
export const BranchOrigin = z.object({ sessionId: z.string(), beforeMessage: z.number().int() });
export type BranchOrigin = z.infer<typeof BranchOrigin>;

/** The same in the session's view, with the seq of the last message copied from the source (0: none). */
export const SessionBranchOrigin = BranchOrigin.extend({ seededThrough: z.number().int() });
export type SessionBranchOrigin = z.infer<typeof SessionBranchOrigin>;

export const SessionView = z.object({
  sessionId: z.string(),
  mode: z.string(),
  /** The version of the mode the session is pinned to (POST with `modeVersion`); null: the current one each turn. */
  modeVersion: z.number().int().nullable(),
  status: SessionStatus,
  modeHistory: z.array(ModeHistoryEntry),
  pendingToolCalls: z.array(AgentToolCall),
  /** A question a tool's MCP server asks the user, waiting for the answer (the turn is running). */
  pendingElicitation: PendingElicitation.optional(),
  parentSessionId: z.string().nullable(),
  /** The session a person branched this one from, and where; null for a session that is no such branch. */
  branchOf: SessionBranchOrigin.nullable(),
  /**
   * The newest messages (at most MESSAGE_PAGE, and at most VIEW_MESSAGE_CHARS of them but the newest), in order,
   * each one's content cut to VIEW_CONTENT_CHARS (`truncated`); older ones come from GET .../messages?before=oldestSeq.
   */
  conversation: z.array(ViewMessage),
  /** Messages older than `conversation` remain. */
  hasMoreMessages: z.boolean(),
  /** The seq of the first message in `conversation`; null when there is none. */
  oldestSeq: z.number().int().nullable(),
  /**
   * The summary the model is sent in place of the messages it covers (fromSeq..toSeq), its text cut to a preview of
   * SUMMARY_PREVIEW_CHARS (the whole at GET .../summary); null before there is one.
   */
  summary: SummaryPreview.nullable(),
  /** The newest ended turns (at most VIEW_TURNS), in order. */
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
  /**
   * The title a person gave it (PATCH), or else one from the first message (one line, at most 80 characters); null
   * until there is one.
   */
  title: z.string().nullable(),
  /** The title is a person's (PATCH): the automatic one never replaces it. */
  titleSetByUser: z.boolean(),
  /** When the session was archived (it is listed only with `archived=true`); null when it is not. */
  archivedAt: z.string().nullable(),
  parentSessionId: z.string().nullable(),
  /** The session a person branched this one from, and where; null for a session that is no such branch. */
  branchOf: BranchOrigin.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SessionListEntry = z.infer<typeof SessionListEntry>;

/** A title's longest length, a person's as the automatic one's. */
export const MAX_TITLE_CHARS = 80;

/** A person's change to a session: its title (null: the automatic one again), archived or not. At least one. */
export const PatchSessionBody = z
  .strictObject({
    /** Its runs of white space are one space each (a title is one line). */
    title: z
      .string()
      .trim()
      .min(1, "must not be empty (null gives the automatic title back)")
      .max(MAX_TITLE_CHARS)
      .superRefine(typedName)
      .nullable()
      .optional(),
    archived: z.boolean().optional(),
  })
  .refine((b) => b.title !== undefined || b.archived !== undefined, {
    error: "needs title or archived",
  });
export type PatchSessionBody = z.infer<typeof PatchSessionBody>;

/** The export's format name and version: a later shape gets a new name, this one keeps its fields. */
export const SESSION_EXPORT_FORMAT = "aptix.session.v1";

/** A call as the export carries it: the wire's, with its turn, batch, position and state. */
export const ExportedToolCall = AgentToolCall.extend({
  turnId: z.string(),
  /** The model response (iteration) of its turn the call came from. */
  batch: z.number().int(),
  position: z.number().int(),
  state: z.enum(["ready", "awaiting_approval", "awaiting_client", "settled"]),
  approval: ApprovalState.nullable(),
});

/** GET /context/sessions/:id/export?format=json: the whole session, for a system to import (docs/api.md). */
export const SessionExport = z.object({
  format: z.literal(SESSION_EXPORT_FORMAT),
  exportedAt: z.string(),
  session: z.object({
    sessionId: z.string(),
    title: z.string().nullable(),
    user: z.string(),
    mode: z.string(),
    status: SessionStatus,
    parentSessionId: z.string().nullable(),
    archivedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
  /** The conversation in order: the user's messages, the model's answers and calls, the tools' results. */
  messages: z.array(ConversationMessage),
  /** Every tool call of every turn, with its arguments, approval and result. */
  toolCalls: z.array(ExportedToolCall),
  turns: z.array(TurnRecord),
  modeHistory: z.array(ModeHistoryEntry),
  artifacts: z.array(Artifact),
});
export type SessionExport = z.infer<typeof SessionExport>;

export const SessionList = z.object({
  sessions: z.array(SessionListEntry),
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
});

/** A page of a session's messages, newest first (GET /context/sessions/:id/messages). */
export const MessagePage = z.object({
  messages: z.array(ConversationMessage),
  /** Messages older than the last one here remain: ask again with `before` set to its seq. */
  hasMore: z.boolean(),
});
export type MessagePage = z.infer<typeof MessagePage>;

export const SessionCreated = SessionView.pick({
  sessionId: true,
  mode: true,
  modeVersion: true,
  status: true,
  createdAt: true,
});
/** A new branch: the session, where it branched from, and how many messages it was seeded with. */
export const BranchCreated = SessionCreated.omit({ modeVersion: true }).extend({ branchOf: SessionBranchOrigin });
export const WsTicket = z.object({ ticket: z.string(), expiresAt: z.string() });

export const WorkflowRunResponse = z.object({
  sessionId: z.string(),
  workflowId: z.string(),
  mode: z.string(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type WorkflowRunResponse = z.infer<typeof WorkflowRunResponse>;

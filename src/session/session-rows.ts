// The rows of the session object's tables as zod schemas: every row (and the JSON it holds) is parsed on its way
// in from storage, so a row that is not what the code wrote fails loudly, naming the table and the field, instead
// of travelling on as a cast. Shapes a client also sees are the wire's own schemas.
import { z } from "zod";
import type { StoredRatio } from "../agent/token-calibration";
import { SessionIdentity, TurnState } from "../agent/turn-store";
import { StoredAttachment, shownAttachment } from "../wire/attachments";
import type { Artifact, ModeHistoryEntry } from "../wire/session";
import { ConversationMessage, type ConversationSummary, SessionStatus, TurnError, TurnRecord } from "../wire/turn";

/** The session's record: who owns it, its mode and status, where it branched from, when. */
export const SessionRecord = SessionIdentity.extend({
  status: SessionStatus,
  parentSessionId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SessionRecord = z.infer<typeof SessionRecord>;

/** A stored row or JSON value that does not parse as what the code wrote: the message names what and where. */
export class CorruptSessionRowError extends Error {
  constructor(what: string, problem: string, options?: ErrorOptions) {
    super(`A stored ${what} is corrupt: ${problem}`, options);
    this.name = "CorruptSessionRowError";
  }
}

function parseRow<S extends z.ZodType>(schema: S, row: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(row);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new CorruptSessionRowError(what, `${issue?.path.join(".") || "(value)"} ${issue?.message ?? ""}`.trim());
}

/** A JSON column's value, parsed with `schema`. */
export function parseStored<S extends z.ZodType>(
  schema: S,
  json: SqlStorageValue | undefined,
  what: string,
): z.output<S> {
  if (typeof json !== "string") return parseRow(schema, json, what);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new CorruptSessionRowError(what, "it is not valid JSON", { cause: error });
  }
  return parseRow(schema, value, what);
}

/** A JSON column that may be NULL. */
const jsonOf = <S extends z.ZodType>(schema: S) =>
  z
    .string()
    .nullable()
    .transform((json, ctx) => {
      if (json === null) return null;
      try {
        const value: unknown = JSON.parse(json);
        return value;
      } catch {
        ctx.addIssue({ code: "custom", message: "is not valid JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema.nullable());

const SessionRow = z.object({
  session_id: z.string(),
  org: z.string(),
  user_id: z.string(),
  mode: z.string(),
  status: SessionStatus,
  parent_session_id: z.string().nullable(),
  turn_json: jsonOf(TurnState),
  created_at: z.string(),
  updated_at: z.string(),
});

export function sessionOfRow(row: unknown): { record: SessionRecord; turn: TurnState | null } {
  const r = parseRow(SessionRow, row, "session row");
  return {
    record: {
      sessionId: r.session_id,
      org: r.org,
      user: r.user_id,
      mode: r.mode,
      status: r.status,
      parentSessionId: r.parent_session_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    },
    turn: r.turn_json,
  };
}

const MessageRow = z.object({
  seq: z.number().int(),
  turn_id: z.string(),
  role: ConversationMessage.shape.role,
  content: z.string().nullable(),
  tool_calls_json: jsonOf(z.array(ConversationMessage.shape.toolCalls.unwrap().element)),
  tool_call_id: z.string().nullable(),
  kind: ConversationMessage.shape.kind,
  created_at: z.string(),
  /** Absent from a row read by a query that names its columns; NULL for a message without files. */
  attachments_json: jsonOf(z.array(StoredAttachment)).optional(),
});

export function messageOfRow(row: unknown): ConversationMessage {
  const r = parseRow(MessageRow, row, "message");
  return {
    seq: r.seq,
    turnId: r.turn_id,
    role: r.role,
    content: r.content,
    ...(r.tool_calls_json ? { toolCalls: r.tool_calls_json } : {}),
    ...(r.tool_call_id !== null ? { toolCallId: r.tool_call_id } : {}),
    ...(r.attachments_json ? { attachments: r.attachments_json } : {}),
    kind: r.kind,
    createdAt: r.created_at,
  };
}

/** A message as a client sees it (a view, a page, an export): its images without their data. */
export function shownMessage(message: ConversationMessage): ConversationMessage {
  if (!message.attachments?.some((a) => a.data !== undefined)) return message;
  return { ...message, attachments: message.attachments.map(shownAttachment) };
}

const TurnRow = z.object({
  turn_id: z.string(),
  status: TurnRecord.shape.status,
  started_at: z.string(),
  ended_at: z.string(),
  iterations: z.number().int(),
  error_json: jsonOf(TurnError),
});

export function turnRecordOfRow(row: unknown): TurnRecord {
  const r = parseRow(TurnRow, row, "turn");
  return {
    turnId: r.turn_id,
    status: r.status,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    iterations: r.iterations,
    error: r.error_json,
  };
}

const ModeHistoryRow = z.object({
  from_mode: z.string(),
  to_mode: z.string(),
  reason: z.string(),
  user_id: z.string(),
  at: z.string(),
});

export function modeHistoryOfRow(row: unknown): ModeHistoryEntry {
  const r = parseRow(ModeHistoryRow, row, "mode history entry");
  return { from: r.from_mode, to: r.to_mode, reason: r.reason, userId: r.user_id, at: r.at };
}

const ArtifactRow = z.object({
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  content: z.string(),
  created_at: z.string(),
});

export function artifactOfRow(row: unknown): Artifact {
  const r = parseRow(ArtifactRow, row, "artifact");
  return { id: r.id, kind: r.kind, title: r.title, content: r.content, createdAt: r.created_at };
}

const SummaryRow = z.object({
  from_seq: z.number().int(),
  to_seq: z.number().int(),
  text: z.string(),
  created_at: z.string(),
});

export function summaryOfRow(row: unknown): ConversationSummary {
  const r = parseRow(SummaryRow, row, "summary");
  return { fromSeq: r.from_seq, toSeq: r.to_seq, text: r.text, createdAt: r.created_at };
}

const TokenRatioRow = z.object({
  route: z.string(),
  ratio: z.number().positive(),
  estimated_tokens: z.number().int(),
  reported_tokens: z.number().int(),
});

export function tokenRatioOfRow(row: unknown): StoredRatio {
  const r = parseRow(TokenRatioRow, row, "token ratio");
  return { route: r.route, ratio: r.ratio, estimatedTokens: r.estimated_tokens, reportedTokens: r.reported_tokens };
}

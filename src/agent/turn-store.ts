// What the loop needs from the session's storage; the Durable Object implements it over SQLite. The shapes a
// client also sees (a message, a turn's record, token usage) are the wire's (src/wire/turn.ts).
import { z } from "zod";
import type { ChatTool } from "../wire/openai";
import {
  type ConversationMessage,
  type ConversationSummary,
  type SessionStatus,
  TokenUsage,
  type TurnRecord,
} from "../wire/turn";
import type { StoredToolCall } from "./agent-tool-call";

export type NewMessage = Omit<ConversationMessage, "seq" | "createdAt">;

/** The open turn, kept in storage so an evicted object resumes it (parsed with this schema on the way in). */
export const TurnState = z.object({
  turnId: z.string(),
  startedAt: z.number(),
  /** The tool format of the route that served the turn's latest model call (its calls' results are written so). */
  stepFormat: z.enum(["native", "json"]).optional(),
  /** Working time of the runs before the current one, in ms; time spent paused is not counted. */
  workedMs: z.number().optional(),
  /** While paused: when the pause began, and when it expires. */
  pausedAt: z.number().optional(),
  pauseExpiresAt: z.number().optional(),
  iterations: z.number().int(),
  /** Malformed JSON-format replies in a row. */
  parseFailures: z.number().int(),
  /** The batch (model response) whose calls are still being settled. */
  batch: z.number().int().nullable(),
  /** What the model said beside its tool calls, reported while the turn waits. */
  text: z.string().optional(),
  /** The tokens the turn's model calls used, as the model reported them. */
  usage: TokenUsage.optional(),
  branchSessionId: z.string().optional(),
  /** When the current run began (a message, a decision, a result, a resumption): an interrupted run's start. */
  runSince: z.number().optional(),
  /** How many times a restart of the session's object cut the turn off and it resumed. */
  resumes: z.number().int().optional(),
  /** Who the current run acts for: a resumed run's model calls count against the same key and user. */
  caller: z.object({ org: z.string(), user: z.string(), keyId: z.string() }).optional(),
  /**
   * The current run came through the OpenAI door: the client's own tools (offered instead of the mode's client
   * tools), and no one to answer an MCP server's question. A resumed run has them too.
   */
  door: z
    .object({
      clientTools: z.array(
        z.custom<ChatTool>((v) => typeof v === "object" && v !== null && "function" in v, "a client's tool"),
      ),
      declineElicitations: z.boolean(),
    })
    .optional(),
});
export type TurnState = z.infer<typeof TurnState>;

export const SessionIdentity = z.object({ sessionId: z.string(), org: z.string(), user: z.string(), mode: z.string() });
export type SessionIdentity = z.infer<typeof SessionIdentity>;

/** Synchronous, like a Durable Object's SQLite: each write is durable before the next reply goes out. */
export interface TurnStore {
  identity(): SessionIdentity;
  status(): SessionStatus;
  turn(): TurnState | null;
  /** Writes the status and the open turn together. */
  saveTurn(status: SessionStatus, turn: TurnState | null): void;
  /** The whole conversation (tests, exports): the loop walks it back with newestFirst instead. */
  messages(): ConversationMessage[];
  /** The conversation from its newest message back, read only as far as the caller goes. */
  newestFirst(): Iterable<ConversationMessage>;
  /** The summary of the conversation's earlier part the model is sent in its place; null before there is one. */
  summary(): ConversationSummary | null;
  appendMessage(message: NewMessage): ConversationMessage;
  toolCalls(turnId: string): StoredToolCall[];
  saveToolCall(call: StoredToolCall): void;
  /** Records how a turn ended (completed, failed, cancelled), for the session's history. */
  recordTurnOutcome(outcome: TurnRecord): void;
  /** How the newest ended turn ended, or null before the first one ends. */
  lastTurnOutcome(): TurnRecord | null;
}

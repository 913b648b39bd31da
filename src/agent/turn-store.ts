// What the loop needs from the session's storage; the Durable Object implements it over SQLite.
import type { ModelToolCall } from "../llm/chat-model";
import type { StoredToolCall } from "./agent-tool-call";

export type SessionStatus = "idle" | "running" | "awaiting_approval" | "awaiting_client";

/** Why a message is in the conversation, beside its role. */
export type MessageKind = "message" | "tool_result" | "correction" | "workflow" | "answer";

export interface ConversationMessage {
  seq: number;
  turnId: string;
  role: "user" | "assistant" | "tool";
  content: string | null;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
  kind: MessageKind;
  createdAt: string;
}

export type NewMessage = Omit<ConversationMessage, "seq" | "createdAt">;

/** The open turn, kept in storage so an evicted object resumes it. */
export interface TurnState {
  turnId: string;
  startedAt: number;
  /** Working time of the runs before the current one, in ms; time spent paused is not counted. */
  workedMs?: number;
  /** While paused: when the pause began, and when it expires. */
  pausedAt?: number;
  pauseExpiresAt?: number;
  iterations: number;
  /** Malformed JSON-format replies in a row. */
  parseFailures: number;
  /** The batch (model response) whose calls are still being settled. */
  batch: number | null;
  /** What the model said beside its tool calls, reported while the turn waits. */
  text?: string;
  branchSessionId?: string;
}

export interface SessionIdentity {
  sessionId: string;
  org: string;
  user: string;
  mode: string;
}

/** Synchronous, like a Durable Object's SQLite: each write is durable before the next reply goes out. */
export interface TurnStore {
  identity(): SessionIdentity;
  status(): SessionStatus;
  turn(): TurnState | null;
  /** Writes the status and the open turn together. */
  saveTurn(status: SessionStatus, turn: TurnState | null): void;
  messages(): ConversationMessage[];
  appendMessage(message: NewMessage): ConversationMessage;
  toolCalls(turnId: string): StoredToolCall[];
  saveToolCall(call: StoredToolCall): void;
  /** Records how a turn ended (completed, failed, cancelled), for the session's history. */
  recordTurnOutcome(outcome: TurnRecord): void;
  /** How the newest ended turn ended, or null before the first one ends. */
  lastTurnOutcome(): TurnRecord | null;
}

export interface TurnRecord {
  turnId: string;
  status: "completed" | "failed" | "cancelled";
  startedAt: string;
  endedAt: string;
  iterations: number;
  error: { code: string; message: string } | null;
}

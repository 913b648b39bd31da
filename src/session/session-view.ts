// What a session looks like from outside: the GET /context/sessions/:id body and the session_state frame.
import { type AgentToolCall, publicToolCall } from "../agent/agent-tool-call";
import type { ConversationMessage, SessionStatus, TurnRecord } from "../agent/turn-store";
import type { Artifact } from "../workflows/workflow";
import type { SessionStateFrame } from "./protocol";
import type { ModeHistoryEntry, SessionStore } from "./session-store";

export interface SessionView {
  sessionId: string;
  mode: string;
  status: SessionStatus;
  modeHistory: ModeHistoryEntry[];
  pendingToolCalls: AgentToolCall[];
  parentSessionId: string | null;
  conversation: ConversationMessage[];
  turns: TurnRecord[];
  artifacts: Artifact[];
  createdAt: string;
  updatedAt: string;
}

export function sessionView(store: SessionStore): SessionView {
  const record = store.record();
  if (!record) throw new Error("The session does not exist.");
  return {
    sessionId: record.sessionId,
    mode: record.mode,
    status: record.status,
    modeHistory: store.modeHistory(),
    pendingToolCalls: store.pendingToolCalls().map(publicToolCall),
    parentSessionId: record.parentSessionId,
    conversation: store.messages(),
    turns: store.turns(),
    artifacts: store.artifacts(),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

export function sessionStateFrame(store: SessionStore, sessionId: string, lastSeq: number): SessionStateFrame {
  const record = store.record();
  return {
    type: "session_state",
    sessionId,
    mode: record?.mode ?? "",
    status: record?.status ?? "idle",
    pendingToolCalls: store.pendingToolCalls().map(publicToolCall),
    lastSeq,
    turnInFlight: record?.status === "running",
  };
}

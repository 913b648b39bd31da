// What a session looks like from outside: the GET /context/sessions/:id body and the session_state frame.
import { publicToolCall } from "../agent/agent-tool-call";
import type { SessionStateFrame } from "../wire/frames";
import { MESSAGE_PAGE, type SessionBranchOrigin, type SessionView, VIEW_TURNS } from "../wire/session";
import type { SessionStore } from "./session-store";

/** The session with its newest page of messages and turns: its size does not grow with the conversation. */
export function sessionView(store: SessionStore, branchOf: SessionBranchOrigin | null): SessionView {
  const record = store.record();
  if (!record) throw new Error("The session does not exist.");
  const page = store.messagesPage(null, MESSAGE_PAGE);
  const conversation = page.messages.reverse();
  return {
    sessionId: record.sessionId,
    mode: record.mode,
    status: record.status,
    modeHistory: store.modeHistory(),
    pendingToolCalls: store.pendingToolCalls().map(publicToolCall),
    parentSessionId: record.parentSessionId,
    branchOf,
    conversation,
    hasMoreMessages: page.hasMore,
    oldestSeq: conversation[0]?.seq ?? null,
    summary: store.summary(),
    turns: store.recentTurns(VIEW_TURNS),
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

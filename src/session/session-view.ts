// What a session looks like from outside: the GET /context/sessions/:id body and the session_state frame.
import { publicToolCall } from "../agent/agent-tool-call";
import type { SessionStateFrame } from "../wire/frames";
import type { SessionView } from "../wire/session";
import type { SessionStore } from "./session-store";

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

// What a session looks like from outside: the GET /context/sessions/:id body and the session_state frame.
import { publicToolCall } from "../agent/agent-tool-call";
import type { SessionStateFrame } from "../wire/frames";
import {
  MESSAGE_PAGE,
  type SessionBranchOrigin,
  type SessionView,
  SUMMARY_PREVIEW_CHARS,
  type SummaryPreview,
  VIEW_CONTENT_CHARS,
  VIEW_MESSAGE_CHARS,
  VIEW_TURNS,
  type ViewMessage,
} from "../wire/session";
import type { ConversationMessage, ConversationSummary } from "../wire/turn";
import type { SessionStore } from "./session-store";

/**
 * The session with its newest page of messages and turns: its size does not grow with the conversation. `modeVersion`:
 * the version it is pinned to (null: none).
 */
export function sessionView(
  store: SessionStore,
  branchOf: SessionBranchOrigin | null,
  modeVersion: number | null,
): SessionView {
  const record = store.record();
  if (!record) throw new Error("The session does not exist.");
  const page = store.messagesPage(null, MESSAGE_PAGE);
  const { messages, cut } = withinChars(page.messages.map(viewMessage), VIEW_MESSAGE_CHARS);
  const conversation = messages.reverse();
  return {
    sessionId: record.sessionId,
    mode: record.mode,
    modeVersion,
    status: record.status,
    modeHistory: store.modeHistory(),
    pendingToolCalls: store.pendingToolCalls().map(publicToolCall),
    parentSessionId: record.parentSessionId,
    branchOf,
    conversation,
    hasMoreMessages: page.hasMore || cut,
    oldestSeq: conversation[0]?.seq ?? null,
    summary: summaryPreview(store.summary()),
    turns: store.recentTurns(VIEW_TURNS),
    artifacts: store.artifacts(),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** The message with its content cut to VIEW_CONTENT_CHARS: one long answer does not make the view as long. */
function viewMessage(message: ConversationMessage): ViewMessage {
  const content = message.content;
  if (content === null || content.length <= VIEW_CONTENT_CHARS) return message;
  return { ...message, content: content.slice(0, VIEW_CONTENT_CHARS), contentChars: content.length, truncated: true };
}

/** The newest messages (newest first) while their JSON fits `chars`; the newest always. */
function withinChars<M>(newestFirst: M[], chars: number): { messages: M[]; cut: boolean } {
  let used = 0;
  for (const [i, message] of newestFirst.entries()) {
    used += JSON.stringify(message).length;
    if (used > chars && i > 0) return { messages: newestFirst.slice(0, i), cut: true };
  }
  return { messages: newestFirst, cut: false };
}

/** The summary with its text cut to SUMMARY_PREVIEW_CHARS; the view's size does not grow with it. */
export function summaryPreview(summary: ConversationSummary | null): SummaryPreview | null {
  if (!summary) return null;
  const truncated = summary.text.length > SUMMARY_PREVIEW_CHARS;
  return {
    ...summary,
    text: truncated ? summary.text.slice(0, SUMMARY_PREVIEW_CHARS) : summary.text,
    textChars: summary.text.length,
    truncated,
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

// A session's whole conversation as one export (GET /context/sessions/:id/export): JSON a system can import, in the
// versioned shape `aptix.session.v1` (docs/api.md), or Markdown a person can read, tool calls and results included.

import { publicToolCall } from "../agent/agent-tool-call";
import { codeSpan, fenced, markdownText } from "../markdown-fence";
import { asTypedName } from "../typed-name";
import { SESSION_EXPORT_FORMAT, type SessionExport } from "../wire/session";
import type { ConversationMessage } from "../wire/turn";
import { shownMessage } from "./session-rows";
import type { SessionStore } from "./session-store";

export const EXPORT_FORMATS = ["json", "markdown"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** An export as the Worker answers it: the body, its media type and the file name it is saved as. */
export interface ExportFile {
  body: string;
  contentType: string;
  filename: string;
}

/** What the list knows of the session (its title, whether archived); null when it has no list entry. */
export interface ListedAs {
  title: string | null;
  archivedAt: string | null;
}

/** The session as the JSON export carries it, read from the object's storage in one go. */
export function sessionExport(store: SessionStore, listed: ListedAs | null, now = new Date()): SessionExport {
  const record = store.record();
  if (!record) throw new Error("The session does not exist.");
  return {
    format: SESSION_EXPORT_FORMAT,
    exportedAt: now.toISOString(),
    session: {
      sessionId: record.sessionId,
      title: listed?.title ?? null,
      user: record.user,
      mode: record.mode,
      status: record.status,
      parentSessionId: record.parentSessionId,
      archivedAt: listed?.archivedAt ?? null,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    },
    messages: store.messages().map(shownMessage),
    toolCalls: store.allToolCalls().map((call) => ({
      ...publicToolCall(call),
      turnId: call.turnId,
      batch: call.batch,
      position: call.position,
      state: call.state,
    })),
    turns: store.turns(),
    modeHistory: store.modeHistory(),
    artifacts: store.artifacts(),
  };
}

/** The export in `format`, named for the session. */
export function exportFile(doc: SessionExport, format: ExportFormat): ExportFile {
  const name = `aptix-session-${doc.session.sessionId.slice(0, 12)}`;
  return format === "json"
    ? {
        body: `${JSON.stringify(doc, null, 2)}\n`,
        contentType: "application/json; charset=utf-8",
        filename: `${name}.json`,
      }
    : { body: markdown(doc), contentType: "text/markdown; charset=utf-8", filename: `${name}.md` };
}

/** JSON text pretty-printed when it parses; as it is otherwise. */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const SPEAKERS: Record<ConversationMessage["role"], string> = { user: "User", assistant: "Assistant", tool: "Tool" };

/**
 * The export a person reads. What people and models named (the title, files, calls) is shown as literal text or
 * code, never as Markdown or HTML; what they wrote (messages) is Markdown, as they wrote it.
 */
function markdown(doc: SessionExport): string {
  const { session } = doc;
  const calls = new Map(doc.toolCalls.map((call) => [`${call.turnId} ${call.id}`, call]));
  // A title kept before titles were checked may hold what a title now cannot: it does not come into the file.
  const title = session.title === null ? `Session ${session.sessionId}` : asTypedName(session.title);
  const out: string[] = [
    `# ${markdownText(title)}`,
    "",
    `- Session: \`${session.sessionId}\``,
    `- Mode: ${session.mode}; status: ${session.status}`,
    `- Created: ${session.createdAt}; last change: ${session.updatedAt}`,
    `- Exported: ${doc.exportedAt} (${doc.format})`,
  ];
  const shown = new Set<string>();
  for (const message of doc.messages) {
    // A tool's result is shown with its call, below the answer that made it (one whose call is not known, by itself).
    if (message.toolCallId !== undefined && shown.has(`${message.turnId} ${message.toolCallId}`)) continue;
    out.push("", `## ${SPEAKERS[message.role]} (${message.createdAt})`, "");
    if (message.content) out.push(message.content);
    for (const file of message.attachments ?? []) {
      const what = file.text === undefined ? "Attached image" : "Attached file";
      out.push("", `**${what}** ${codeSpan(file.name)} (${markdownText(file.mediaType)}, ${file.bytes} bytes)`);
      if (file.text !== undefined) out.push("", fenced(file.text));
    }
    for (const made of message.toolCalls ?? []) {
      const call = calls.get(`${message.turnId} ${made.id}`);
      if (call) shown.add(`${message.turnId} ${made.id}`);
      const approval = call?.approval ? `; ${call.approval}` : "";
      out.push(
        "",
        `**Tool call** ${codeSpan(made.name)} (${codeSpan(made.id)}${approval})`,
        "",
        fenced(prettyJson(made.arguments), "json"),
      );
      if (call?.resultJson !== null && call?.resultJson !== undefined) {
        out.push("", "Result:", "", fenced(prettyJson(call.resultJson), "json"));
      } else if (call?.errorMessage) {
        out.push("", `Failed: ${call.errorMessage}`);
      }
    }
  }
  for (const turn of doc.turns.filter((t) => t.error)) {
    out.push("", `> Turn \`${turn.turnId}\` ${turn.status}: ${turn.error?.message ?? ""}`);
  }
  return `${out.join("\n")}\n`;
}

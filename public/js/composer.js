// @ts-check
// The composer: the message box, its files, sending (over the socket, or over HTTP when there is none), the draft a
// refusal puts back, and Stop (its button and Esc).
import { composerAttachments, LIMITS_TEXT } from "./attachments.js";
import { reloadSession } from "./connection.js";
import { showWorking, turnEnded } from "./conversation-view.js";
import { byId } from "./dom.js";
import { el } from "./elements.js";
import { describe, say } from "./status.js";
import { state } from "./store.js";
import { messageItem } from "./views.js";

const ENDED = new Set(["completed", "failed", "cancelled"]);

/** A frame larger than this goes over HTTP instead (the socket takes frames up to 1,000,000 bytes). */
const MAX_SOCKET_MESSAGE_CHARS = 900_000;

/** Puts back a message the server refused, with its files, so nothing the user wrote is lost. */
export function restoreDraft() {
  const draft = state.draft;
  state.draft = null;
  if (draft && !el.composerInput.value.trim()) el.composerInput.value = draft.content;
  if (draft?.files.length) attachments.restore(draft.files);
}

/** @param {string} content */
export async function sendMessage(content) {
  const clientMessageId = `console-${Date.now()}-${++state.messageCounter}`;
  const shown = attachments.shown();
  const files = attachments.take();
  const sent = files.map((f) => f.attachment);
  el.conversation.append(messageItem({ role: "user", kind: "message", content, attachments: shown }));
  el.composerInput.value = "";
  // Kept until turn_started names this message; a refusal (busy, waiting for approvals) restores it.
  state.draft = { clientMessageId, content, files };
  const frame = { type: "user_message", content, clientMessageId, ...(sent.length ? { attachments: sent } : {}) };
  if (JSON.stringify(frame).length < MAX_SOCKET_MESSAGE_CHARS && state.socket?.send(frame)) return;
  // No socket right now: the same turn over HTTP. Its frames reach the socket if it opens meanwhile; a turn
  // that ends before it does is known from the answer alone.
  const sessionId = state.sessionId;
  let response = null;
  try {
    state.turnStarts++;
    showWorking();
    response = await state.api.sendMessage(sessionId, content, sent);
    state.draft = null;
  } catch (error) {
    say(describe(error), true);
    restoreDraft();
  }
  await reloadSession();
  if (response && ENDED.has(response.status) && state.sessionId === sessionId)
    turnEnded(state.lastEndedTurnId, response);
}

/** The composer's files: attached with the button, dropped or pasted; a message of files alone needs no text. */
const attachments = composerAttachments({
  composer: el.composer,
  input: el.composerInput,
  fileInput: byId("attach-input", HTMLInputElement),
  chips: byId("attachment-chips"),
  note: byId("attach-note"),
  imagesAccepted: () => state.modes.find((m) => m.key === state.mode)?.acceptsImages,
  onChange: (count) => {
    el.composerInput.required = count === 0;
  },
});
byId("attach-limits").textContent = LIMITS_TEXT;

el.composer.addEventListener("submit", (event) => {
  event.preventDefault();
  const content = el.composerInput.value.trim();
  if (content || attachments.count() > 0) void sendMessage(content);
});

el.composerInput.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    el.composer.requestSubmit();
  }
});

byId("stop-turn").addEventListener("click", () => {
  // Cancel ends a running turn through its signal, or a paused one at once; either way turn_completed follows.
  if (!state.socket?.send({ type: "cancel" }))
    say("Not connected to the session right now; try again in a moment.", true);
});

// Esc stops the running turn as the Stop button does (a dialog open takes Esc for itself first).
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.defaultPrevented || el.turnBar.hidden) return;
  if (document.querySelector("dialog[open]")) return;
  event.preventDefault();
  byId("stop-turn").click();
});

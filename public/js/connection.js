// @ts-check
// The open session's connection: opening a session (or reusing the empty one), its WebSocket and reconnects, and
// redrawing it from GET so nothing falls between the socket's frames and the page.
import { ApiError } from "./api.js";
import { branches, renderSession, setStream } from "./conversation-view.js";
import { el } from "./elements.js";
import { reduce } from "./reducer.js";
import { SessionSocket } from "./socket.js";
import { describe, say } from "./status.js";
import { forgetDecisions, SESSION_STORAGE, state } from "./store.js";

/**
 * Opens `storedId`, or a new conversation when there is none (or it is gone); with `reuseEmpty`, the newest
 * conversation instead of a new one when nothing has been said in it yet.
 * @param {string | null} storedId
 * @param {{ reuseEmpty?: boolean }} [options]
 */
export async function openSession(storedId, options = {}) {
  let view = null;
  if (storedId) {
    try {
      view = await state.api.getSession(storedId);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  if (!view && options.reuseEmpty) view = await emptyConversation();
  if (!view) {
    const created = await state.api.createSession();
    view = await state.api.getSession(created.sessionId);
  }
  state.sessionId = view.sessionId;
  setStream("", 0);
  sessionStorage.setItem(SESSION_STORAGE, view.sessionId);
  el.sessionIdLabel.textContent = view.sessionId;
  renderSession(view);
  connectSocket();
  void branches.load(view);
}

/** How many of the newest unnamed conversations are looked into for an empty one (each is one GET). */
const EMPTY_CANDIDATES = 3;

/**
 * A conversation the person started in which nothing has been said (no title yet, no message), newest first, else
 * null: signing in again or asking for a new conversation opens it, so at most one empty conversation exists. A
 * branch (the agent's in another mode, or one the person made) is not taken for one.
 */
export async function emptyConversation() {
  const { sessions } = await state.api.listSessions();
  const unnamed = sessions.filter(
    (s) => s.title === null && s.parentSessionId === null && !s.branchOf && s.status === "idle" && !s.archivedAt,
  );
  for (const entry of unnamed.slice(0, EMPTY_CANDIDATES)) {
    const view = await state.api.getSession(entry.sessionId);
    if (view.conversation.length === 0 && view.status === "idle") return view;
  }
  return null;
}

function connectSocket() {
  state.socket?.close();
  forgetDecisions();
  const socket = new SessionSocket(state.api, state.sessionId, {
    onFrame: (frame) => reduce(state, frame),
    onStatus: (connected) => {
      const wasOpen = el.app.dataset.socket === "open";
      el.app.dataset.socket = connected ? "open" : "closed";
      if (!connected && wasOpen) say("The connection to the session dropped; reconnecting…", true);
      if (connected && el.statusLine.textContent.startsWith("The connection")) say("Reconnected.");
      // A decision sent just before the connection dropped may never have arrived: what still waits is asked again.
      if (connected) forgetDecisions();
    },
  });
  state.socket = socket;
  // The first session_state says where the log is; the page then redraws from GET, so nothing falls
  // between the two, and reconnects replay from the last frame seen.
  void socket.connect();
}

/**
 * Redraws the session from GET. Only the newest reload of the current session is drawn (an older answer,
 * or one for a session the page has left, is dropped, and resolves once the newer one has drawn); a
 * failure is said, never thrown.
 * @returns {Promise<void>}
 */
export function reloadSession() {
  const reload = drawSession(++state.reloads);
  state.newestReload = reload;
  return reload;
}

/** @param {number} ticket @returns {Promise<void>} */
async function drawSession(ticket) {
  const sessionId = state.sessionId;
  const turnStarts = state.turnStarts;
  try {
    const view = await state.api.getSession(sessionId);
    if (sessionId !== state.sessionId) return;
    if (ticket !== state.reloads) return state.newestReload;
    // A turn started while this view was on its way: it is older than what the page shows, so ask again.
    if (turnStarts !== state.turnStarts) return reloadSession();
    renderSession(view);
  } catch (error) {
    if (ticket === state.reloads) say(`Could not refresh the session: ${describe(error)}`, true);
  }
}

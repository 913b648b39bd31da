// @ts-check
// The conversation list (the left sidebar): the person's sessions, newest change first, paged, searched by title,
// archived or not; New conversation; opening one; and each entry's actions (rename, archive, export, delete).
import { emptyConversation, openSession } from "./connection.js";
import { byId, h } from "./dom.js";
import { el } from "./elements.js";
import { sessionActions } from "./session-actions.js";
import { describe, say } from "./status.js";
import { SESSION_STORAGE, state } from "./store.js";
import { sessionEntry } from "./views.js";

/**
 * The first page of the user's sessions (the list keeps what it had when the server cannot be reached). The
 * older pages the user opened stay. `retries`: asks again, a second apart, while the open session's entry is
 * not yet what the page knows (its object writes the entry just after a change; a replica may lag).
 */
export async function refreshSessions(retries = 0) {
  try {
    const page = await state.api.listSessions(undefined, state.sessionFilter);
    const first = new Set(page.sessions.map((s) => s.sessionId));
    const older = state.sessionsCursor ? state.sessions.slice(page.sessions.length) : [];
    state.sessions = [...page.sessions, ...older.filter((s) => !first.has(s.sessionId))];
    if (!state.sessionsCursor || older.length === 0) state.sessionsCursor = page.nextCursor;
    drawSessions();
    const current = page.sessions.find((s) => s.sessionId === state.sessionId);
    // Behind: not listed yet, another status, or no title yet though something was said (the entry follows).
    const untitled =
      current?.title === null && [...state.conversation.messages.values()].some((m) => m.role === "user");
    if (retries > 0 && (!current || current.status !== state.status || untitled)) {
      state.sessionsTimer = window.setTimeout(() => void refreshSessions(retries - 1), 1_000);
    }
  } catch {
    // Shown again at the next change.
  }
}

/** Sessions write their list entry just after a change: the sidebar asks again a moment later. */
export function refreshSessionsSoon() {
  clearTimeout(state.sessionsTimer);
  state.sessionsTimer = window.setTimeout(() => void refreshSessions(3), 400);
}

/**
 * The list as drawn: each conversation with the branches made from it (Edit, Regenerate, and branches of those)
 * grouped under it, the group where its newest member is; a branch whose source is not listed stands alone.
 * @param {any[]} sessions newest change first
 * @returns {{entry: any, branches: any[]}[]}
 */
export function groupBranches(sessions) {
  const listed = new Map(sessions.map((s) => [s.sessionId, s]));
  /** The listed conversation a session's branches go back to (itself when it is no listed branch). */
  const rootOf = (entry) => {
    let root = entry;
    const seen = new Set();
    while (root.branchOf && listed.has(root.branchOf.sessionId) && !seen.has(root.sessionId)) {
      seen.add(root.sessionId);
      root = listed.get(root.branchOf.sessionId);
    }
    return root;
  };
  /** @type {Map<string, {entry: any, branches: any[]}>} */
  const groups = new Map();
  for (const entry of sessions) {
    const root = rootOf(entry);
    const group = groups.get(root.sessionId) ?? { entry: root, branches: [] };
    groups.set(root.sessionId, group);
    if (root !== entry) group.branches.push(entry);
  }
  return [...groups.values()];
}

export function drawSessions() {
  const item = (entry) =>
    sessionEntry(entry, {
      current: entry.sessionId === state.sessionId,
      modeName: state.modes.find((m) => m.key === entry.mode)?.displayName ?? entry.mode,
      onOpen: (sessionId) => void switchSession(sessionId),
      onManage: (shown) => openActions(shown),
    });
  el.sessionList.replaceChildren(
    ...groupBranches(state.sessions).map(({ entry, branches }) => {
      const li = item(entry);
      if (branches.length > 0) {
        const title = entry.title ?? "New conversation";
        li.classList.add("has-branches");
        li.append(
          h("ol", { class: "session-branches", "aria-label": `Branches of “${title}”` }, ...branches.map(item)),
        );
      }
      return li;
    }),
  );
  el.moreSessions.hidden = !state.sessionsCursor;
  el.sessionListEmpty.hidden = state.sessions.length > 0;
}

/** The sidebar from its first page again, for the filter as it is now. */
function refilterSessions() {
  state.sessionFilter = { archived: el.showArchived.checked, q: el.sessionSearch.value.trim() };
  state.sessions = [];
  state.sessionsCursor = null;
  void refreshSessions();
}

el.sessionSearch.addEventListener("input", () => {
  clearTimeout(state.searchTimer);
  state.searchTimer = window.setTimeout(refilterSessions, 250);
});
// Enter searches at once (the form never goes anywhere).
byId("session-filter", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  clearTimeout(state.searchTimer);
  refilterSessions();
});
el.showArchived.addEventListener("change", refilterSessions);

/** A conversation's actions (rename, archive, export, delete), from its sidebar entry. */
const openActions = sessionActions({
  api: () => {
    if (!state.api) throw new Error("Not signed in.");
    return state.api;
  },
  changed: (entry) => {
    const listed = Boolean(entry.archivedAt) === state.sessionFilter.archived;
    state.sessions = state.sessions.flatMap((s) => (s.sessionId !== entry.sessionId ? [s] : listed ? [entry] : []));
    drawSessions();
  },
  deleting: (sessionId) => {
    // The open session's socket is closed first: it would only try to reconnect to a session that is gone.
    if (sessionId === state.sessionId) state.socket?.close();
  },
  deleted: async (sessionId) => {
    state.sessions = state.sessions.filter((s) => s.sessionId !== sessionId);
    if (sessionId === state.sessionId) {
      sessionStorage.removeItem(SESSION_STORAGE);
      await openSession(state.sessions[0]?.sessionId ?? null);
    }
    // The focus goes to the message box at once (the Manage button that had it is gone), not after the list's
    // refresh: a person may start typing.
    el.composerInput.focus();
    drawSessions();
    say("The conversation was deleted.");
    await refreshSessions();
  },
});

el.moreSessions.addEventListener("click", async () => {
  try {
    const page = await state.api.listSessions(state.sessionsCursor ?? undefined, state.sessionFilter);
    const shown = new Set(state.sessions.map((s) => s.sessionId));
    state.sessions.push(...page.sessions.filter((s) => !shown.has(s.sessionId)));
    state.sessionsCursor = page.nextCursor;
    drawSessions();
  } catch (error) {
    say(describe(error), true);
  }
});

/** @param {string} sessionId */
async function switchSession(sessionId) {
  if (sessionId === state.sessionId) return;
  try {
    await openSession(sessionId);
    say("");
    drawSessions();
    el.composerInput.focus();
  } catch (error) {
    say(describe(error), true);
  }
}

// A new conversation, or the empty one there is: "New conversation" never piles up empty ones.
byId("new-session").addEventListener("click", async () => {
  try {
    const empty = await emptyConversation();
    if (!empty) sessionStorage.removeItem(SESSION_STORAGE);
    await openSession(empty?.sessionId ?? null);
    say(empty ? "This is your new conversation (nothing was said in it yet)." : "A new conversation started.");
    await refreshSessions();
    el.composerInput.focus();
  } catch (error) {
    say(describe(error), true);
  }
});

// Ctrl+K (Cmd+K on a Mac) searches the conversations, as in the chat apps people know: the list unfolds (on a
// phone it starts folded) and its search box takes the focus, its text selected for a new search. The same words
// find messages too (js/message-search.js).
document.addEventListener("keydown", (event) => {
  if (event.key.toLowerCase() !== "k" || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
  if (el.app.hidden || document.querySelector("dialog[open]")) return;
  event.preventDefault();
  byId("sessions-panel", HTMLDetailsElement).open = true;
  el.sessionSearch.focus();
  el.sessionSearch.select();
});

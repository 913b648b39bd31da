// @ts-check
// The Aptix console: a client of the public API and the session WebSocket, like any other.
import { ApiClient, ApiError, KEY_STORAGE } from "./js/api.js";
import { composerAttachments, LIMITS_TEXT } from "./js/attachments.js";
import { Branches } from "./js/branches.js";
import { byId, h } from "./js/dom.js";
import { followConversation } from "./js/follow.js";
import { markdownReady, renderMarkdown } from "./js/markdown.js";
import { sessionActions } from "./js/session-actions.js";
import { SessionSocket } from "./js/socket.js";
import {
  approvalItem,
  artifactItem,
  clientToolItem,
  downloadArtifact,
  loadEarlierItem,
  messageItem,
  sessionEntry,
  summaryItem,
  toolCallItem,
} from "./js/views.js";
import { fillSchemaForm, fillWorkflowForm, showWorkflowError, workflowList } from "./js/workflow-form.js";

const SESSION_STORAGE = "aptix.sessionId";

const state = {
  /** @type {ApiClient | null} */ api: null,
  /** @type {SessionSocket | null} */ socket: null,
  sessionId: "",
  mode: "",
  status: "idle",
  modes: [],
  categories: [],
  /** Calls of the open turn, by id, as the working indicator shows them. */
  turnCalls: new Map(),
  /** Client requests on screen, by call id. */
  clientCalls: new Map(),
  turnInFlight: false,
  messageCounter: 0,
  /**
   * A message sent and not yet confirmed started, with its files (a refusal puts both back).
   * @type {{ clientMessageId: string, content: string, files: any[] } | null}
   */
  draft: null,
  /** The answer streaming in: its text, and the seq up to which session_state's streamedText already has it. */
  stream: { text: "", coveredSeq: 0, drawPending: false },
  /** The sidebar's sessions, newest change first, and the cursor of the next page (null: none). */
  sessions: [],
  /** @type {string | null} */ sessionsCursor: null,
  /** What the sidebar lists: archived sessions or the others, and those whose title contains `q`. */
  sessionFilter: { archived: false, q: "" },
  /** @type {string | null} The newest ended turn of the session as last drawn. */ lastEndedTurnId: null,
  /** Turns the page has seen end, by id: the socket's turn_completed and a message sent over HTTP may both tell one. */
  endedTurns: new Set(),
  /**
   * The drawn session's messages the page has, by seq: each view's newest page, and older pages loaded on demand;
   * whether older ones remain on the server; and the summary the model is sent in place of the earliest.
   */
  conversation: {
    sessionId: "",
    /** @type {Map<number, any>} */ messages: new Map(),
    hasEarlier: false,
    /** @type {{fromSeq: number, toSeq: number, text: string, createdAt: string, truncated?: boolean} | null} */ summary:
      null,
  },
};

const el = {
  signIn: byId("sign-in"),
  signInForm: byId("sign-in-form", HTMLFormElement),
  apiKey: byId("api-key", HTMLInputElement),
  signInError: byId("sign-in-error"),
  app: byId("app"),
  currentMode: byId("current-mode"),
  modeForm: byId("mode-form", HTMLFormElement),
  modePicker: byId("mode-picker", HTMLSelectElement),
  modeDescription: byId("mode-description"),
  modesPanel: byId("modes-panel"),
  conversation: byId("conversation"),
  streaming: byId("streaming"),
  turnBar: byId("turn-bar"),
  working: byId("working"),
  workingCount: byId("working-count"),
  workingLabel: byId("working-label"),
  announcer: byId("announcer"),
  toolCalls: byId("tool-calls"),
  clientTools: byId("client-tools"),
  statusLine: byId("status-line"),
  composer: byId("composer", HTMLFormElement),
  composerInput: byId("composer-input", HTMLTextAreaElement),
  artifacts: byId("artifacts"),
  sessionIdLabel: byId("session-id"),
  approvalDialog: byId("approval-dialog", HTMLDialogElement),
  approvalForm: byId("approval-form", HTMLFormElement),
  approvalCalls: byId("approval-calls"),
  workflowDialog: byId("workflow-dialog", HTMLDialogElement),
  workflowList: byId("workflow-list"),
  workflowForm: byId("workflow-form", HTMLFormElement),
  elicitationDialog: byId("elicitation-dialog", HTMLDialogElement),
  elicitationForm: byId("elicitation-form", HTMLFormElement),
  elicitationSource: byId("elicitation-source"),
  sessionList: byId("session-list"),
  sessionListEmpty: byId("session-list-empty"),
  sessionSearch: byId("session-search", HTMLInputElement),
  showArchived: byId("show-archived", HTMLInputElement),
  moreSessions: byId("more-sessions", HTMLButtonElement),
  artifactDialog: byId("artifact-dialog", HTMLDialogElement),
  artifactTitle: byId("artifact-title"),
  artifactBody: byId("artifact-body"),
  timelineDialog: byId("timeline-dialog", HTMLDialogElement),
  timelineBody: byId("timeline-body"),
  timelineTip: byId("timeline-tip"),
};
// The view follows the conversation while the reader is at its end (js/follow.js).
const follow = followConversation(
  [el.conversation, el.streaming],
  byId("jump-latest", HTMLButtonElement),
  () => (el.streaming.hidden ? el.conversation.lastElementChild : el.streaming),
  el.statusLine,
  el.composer,
);

function say(text, isError = false) {
  el.statusLine.textContent = text;
  el.statusLine.classList.toggle("error", isError);
}

/** After a branch: a button beside the message that opens the new session (this one stays as it is). */
function offerSession(sessionId) {
  el.statusLine.append(
    " ",
    h("button", {
      type: "button",
      class: "quiet",
      "data-open-session": sessionId,
      text: "Open the new session",
      onclick: async () => {
        try {
          await openSession(sessionId);
          say("You are in the new session; the one you left keeps its conversation.");
          el.composerInput.focus();
        } catch (error) {
          say(describe(error), true);
        }
      },
    }),
  );
}

function describe(error) {
  return error instanceof ApiError ? error.message : "The server could not be reached; try again.";
}

// --- Sign-in ---------------------------------------------------------------------------------------

/** Opens the console for `api` (a key's, or the browser session's after single sign-on). @param {ApiClient} api */
async function signIn(api) {
  // The catalog and the workflows at once (a refused key refuses both); the Markdown libraries load meanwhile.
  const [{ modes }, { categories }] = await Promise.all([api.listModes(), api.workflowCategories()]);
  if (api.apiKey) sessionStorage.setItem(KEY_STORAGE, api.apiKey);
  state.api = api;
  state.modes = modes;
  renderModes();
  state.categories = categories;
  await markdownReady;
  // A link to a turn (the admin page's, `/?session=<id>&turn=<turnId>`) opens that session, then the turn's waterfall.
  const linked = new URLSearchParams(location.search);
  // Without one (a new tab), the newest conversation when nothing was said in it yet: signing in again does not
  // pile up empty conversations.
  await openSession(linked.get("session") ?? sessionStorage.getItem(SESSION_STORAGE), { reuseEmpty: true });
  // On a phone the conversation list starts folded, so the chat comes first.
  if (window.matchMedia("(max-width: 760px)").matches) byId("sessions-panel", HTMLDetailsElement).open = false;
  void refreshSessions();
  el.signIn.hidden = true;
  el.app.hidden = false;
  const turnId = linked.get("turn");
  if (linked.has("session")) history.replaceState(null, "", location.pathname);
  if (turnId && linked.get("session") === state.sessionId) void openTimeline(turnId, null);
  // The admin page is for keys with the admin scope: the link shows when the key may read the org's budget.
  api.request("GET", "/admin/budget").then(
    () => {
      byId("open-admin").hidden = false;
    },
    () => {},
  );
}

el.signInForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  el.signInError.textContent = "";
  const key = el.apiKey.value.trim();
  try {
    await signIn(new ApiClient({ apiKey: key }));
    el.apiKey.value = "";
    el.composerInput.focus();
  } catch (error) {
    el.signInError.textContent =
      error instanceof ApiError && error.status === 401 ? `That key was refused: ${error.message}` : describe(error);
  }
});

byId("sign-out").addEventListener("click", async () => {
  state.socket?.close();
  state.socket = null;
  await state.api?.signOut();
  state.api = null;
  sessionStorage.removeItem(KEY_STORAGE);
  sessionStorage.removeItem(SESSION_STORAGE);
  el.app.hidden = true;
  askToSignIn();
});

// --- Modes -----------------------------------------------------------------------------------------

// On a phone the modes list starts folded (the chat comes first); the header's Modes button opens the panel with it.
const sideToggle = byId("toggle-side", HTMLButtonElement);
sideToggle.addEventListener("click", () => {
  const open = sideToggle.getAttribute("aria-expanded") !== "true";
  sideToggle.setAttribute("aria-expanded", String(open));
  byId("side-panel").classList.toggle("open", open);
});

function renderModes() {
  el.modePicker.replaceChildren(
    ...state.modes.map((mode) => h("option", { value: mode.key, title: mode.description, text: mode.displayName })),
  );
  el.modesPanel.replaceChildren(
    ...state.modes.flatMap((mode) => [
      h("dt", { text: `${mode.displayName} (${mode.key})` }),
      h("dd", { text: mode.description }),
      // The model route the mode's turns use (`default`: the one the server's LLM_* vars make).
      h("dd", {
        class: "mode-route",
        text: `Model route: ${mode.modelRoute ?? "default"}${mode.acceptsImages ? " (reads images)" : ""}`,
      }),
    ]),
  );
}

function showMode(key) {
  // The picker follows the session's mode when it changes, not on every redraw (the user may be choosing).
  if (key !== state.mode) el.modePicker.value = key;
  state.mode = key;
  const mode = state.modes.find((m) => m.key === key);
  el.currentMode.textContent = mode ? mode.displayName : key;
  el.currentMode.title = mode?.description ?? "";
  el.currentMode.dataset.mode = key;
  el.modeDescription.textContent = mode?.description ?? "";
}

el.modeForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const mode = el.modePicker.value;
  try {
    const result = await state.api.runWorkflow(state.sessionId, "switch_mode", { mode });
    say(result.message);
    await reloadSession();
  } catch (error) {
    say(describe(error), true);
    el.modePicker.value = state.mode;
  }
});

// --- The session -----------------------------------------------------------------------------------

/**
 * Opens `storedId`, or a new conversation when there is none (or it is gone); with `reuseEmpty`, the newest
 * conversation instead of a new one when nothing has been said in it yet.
 * @param {string | null} storedId
 * @param {{ reuseEmpty?: boolean }} [options]
 */
async function openSession(storedId, options = {}) {
  let view = null;
  if (storedId) {
    try {
      view = await state.api.getSession(storedId);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    }
  }
  if (!view && options.reuseEmpty) view = await newestIfEmpty();
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

/**
 * The newest conversation, when it is one the person started and nothing has been said in it (no title yet, no
 * message), else null. A branch the agent started in another mode is not taken for one.
 */
async function newestIfEmpty() {
  const newest = (await state.api.listSessions()).sessions[0];
  if (!newest || newest.title !== null || newest.parentSessionId !== null || newest.status !== "idle") return null;
  const view = await state.api.getSession(newest.sessionId);
  return view.conversation.length === 0 ? view : null;
}

/**
 * The calls the user has just decided. A redraw of the session as it was before the server took the decisions (one
 * asked for earlier and answered later) must not ask for them again. Forgotten when the server asks for approvals
 * again, refuses an action, or the socket connects (again, or for another session): a redraw then shows what waits.
 */
const decidedIds = new Set();

function connectSocket() {
  state.socket?.close();
  decidedIds.clear();
  const socket = new SessionSocket(state.api, state.sessionId, {
    onFrame: handleFrame,
    onStatus: (connected) => {
      const wasOpen = el.app.dataset.socket === "open";
      el.app.dataset.socket = connected ? "open" : "closed";
      if (!connected && wasOpen) say("The connection to the session dropped; reconnecting…", true);
      if (connected && el.statusLine.textContent.startsWith("The connection")) say("Reconnected.");
      // A decision sent just before the connection dropped may never have arrived: what still waits is asked again.
      if (connected) decidedIds.clear();
    },
  });
  state.socket = socket;
  // The first session_state says where the log is; the page then redraws from GET, so nothing falls
  // between the two, and reconnects replay from the last frame seen.
  void socket.connect();
}

let reloads = 0;
/** The newest reload: a stale one waits for it, so "reloaded" always means "the newest state is drawn". */
let newestReload = Promise.resolve();

/**
 * Redraws the session from GET. Only the newest reload of the current session is drawn (an older answer,
 * or one for a session the page has left, is dropped, and resolves once the newer one has drawn); a
 * failure is said, never thrown.
 * @returns {Promise<void>}
 */
function reloadSession() {
  const reload = drawSession(++reloads);
  newestReload = reload;
  return reload;
}

/** @param {number} ticket @returns {Promise<void>} */
async function drawSession(ticket) {
  const sessionId = state.sessionId;
  try {
    const view = await state.api.getSession(sessionId);
    if (sessionId !== state.sessionId) return;
    if (ticket !== reloads) return newestReload;
    renderSession(view);
  } catch (error) {
    if (ticket === reloads) say(`Could not refresh the session: ${describe(error)}`, true);
  }
}

function renderSession(view) {
  showMode(view.mode);
  state.status = view.status;
  const held = state.conversation;
  if (held.sessionId !== view.sessionId) {
    decidedIds.clear();
    follow.opened();
    state.conversation = {
      sessionId: view.sessionId,
      messages: new Map(),
      hasEarlier: view.hasMoreMessages,
      summary: null,
    };
  }
  for (const message of view.conversation) state.conversation.messages.set(message.seq, message);
  state.conversation.summary = view.summary ?? null;
  drawConversation();
  el.artifacts.replaceChildren(...view.artifacts.map((artifact) => artifactItem(artifact, openArtifact)));
  const pending = view.pendingToolCalls ?? [];
  showApprovals(pending.filter((call) => call.approval === "pending"));
  const forClient = pending.filter((call) => call.requiresClientExecution && call.approval !== "pending");
  for (const id of [...state.clientCalls.keys()]) {
    if (!forClient.some((call) => call.id === id)) removeClientRequest(id);
  }
  showClientRequests(forClient);
  showElicitation(view.pendingElicitation ?? null);
  if (view.status === "idle") hideWorking();
  else showWorking(view.status === "running" ? "running" : "waiting");
  el.app.dataset.status = view.status;
  state.lastEndedTurnId = view.turns.at(-1)?.turnId ?? null;
}

/** The messages the page has, oldest first, with the summary's marker where the summarised part ends. */
function drawConversation() {
  const { messages, hasEarlier, summary } = state.conversation;
  const items = [];
  if (hasEarlier) items.push(loadEarlierItem(() => void loadEarlier()));
  let marked = summary === null;
  const sorted = [...messages.values()].sort((a, b) => a.seq - b.seq);
  // The last thing the agent said in each turn offers the turn's timeline (one button a turn, under its answer).
  const lastOfTurn = new Map();
  for (const message of sorted)
    if (message.role === "assistant" && (message.content || message.toolCalls?.length))
      lastOfTurn.set(message.turnId, message.seq);
  const onTimeline = (turnId) => (button) => void openTimeline(turnId, button);
  const regenerate = lastAnswerAsked(sorted);
  const { sessionId } = state.conversation;
  const wholeSummary = async () => (await state.api.getSummary(sessionId)).summary?.text ?? "";
  for (const message of sorted) {
    if (!marked && summary && message.seq > summary.toSeq) {
      items.push(summaryItem(summary, wholeSummary));
      marked = true;
    }
    const last = lastOfTurn.get(message.turnId) === message.seq;
    const item = messageItem(message, {
      ...(last ? { onTimeline: onTimeline(message.turnId) } : {}),
      ...(message.truncated
        ? { loadWhole: async () => (await state.api.getMessage(sessionId, message.seq)).messages[0]?.content ?? "" }
        : {}),
    });
    if (!item) continue;
    branches.decorate(item, message, {
      sessionId,
      ...(regenerate?.answer === message ? { regenerate: regenerate.asked } : {}),
    });
    items.push(item);
  }
  if (!marked && summary) items.push(summaryItem(summary, wholeSummary));
  el.conversation.replaceChildren(...items);
}

/**
 * When the session is idle and ends with an answer: that answer and the person's message it answers (Regenerate).
 * @param {any[]} sorted the conversation, oldest first
 */
function lastAnswerAsked(sorted) {
  const answer = sorted.at(-1);
  if (state.status !== "idle" || answer?.role !== "assistant" || answer.kind !== "answer") return null;
  const asked = sorted.findLast((m) => m.role === "user" && m.kind === "message");
  return asked ? { answer, asked } : null;
}

/** A conversation's branches: Copy, Edit, Regenerate and the switcher between branches (js/branches.js). */
const branches = new Branches({
  api: () => {
    if (!state.api) throw new Error("Not signed in.");
    return state.api;
  },
  open: async (sessionId) => {
    await openSession(sessionId);
    drawSessions();
    refreshSessionsSoon();
    el.composerInput.focus();
  },
  send: (content) => sendMessage(content),
  say,
  redraw: () => drawConversation(),
});

/** The page of messages before the oldest one the page has, drawn above it. */
async function loadEarlier() {
  const held = state.conversation;
  const oldest = Math.min(...held.messages.keys());
  try {
    const page = await state.api.getMessages(held.sessionId, oldest);
    if (state.conversation !== held) return;
    for (const message of page.messages) held.messages.set(message.seq, message);
    held.hasEarlier = page.hasMore;
    drawConversation();
  } catch (error) {
    say(`Could not load earlier messages: ${describe(error)}`, true);
  }
}

/**
 * Once per turn, after the session is redrawn: says how a turn that did not complete ended, and counts it in
 * `data-completed-turns` (the browser tests wait on it), whichever way the page heard of its end.
 * @param {string | null} turnId @param {{status: string, error?: {message: string}}} response
 */
function turnEnded(turnId, response) {
  if (!turnId || state.endedTurns.has(turnId)) return;
  state.endedTurns.add(turnId);
  if (response.status === "failed") say(`The turn failed: ${response.error?.message ?? "unknown error"}`, true);
  else if (response.status === "cancelled") say("The turn was cancelled.");
  el.app.dataset.completedTurns = String(Number(el.app.dataset.completedTurns ?? 0) + 1);
}

const ENDED = new Set(["completed", "failed", "cancelled"]);

// --- Sending ---------------------------------------------------------------------------------------

/** Puts back a message the server refused, with its files, so nothing the user wrote is lost. */
function restoreDraft() {
  const draft = state.draft;
  state.draft = null;
  if (draft && !el.composerInput.value.trim()) el.composerInput.value = draft.content;
  if (draft?.files.length) attachments.restore(draft.files);
}

/** A frame larger than this goes over HTTP instead (the socket takes frames up to 1,000,000 bytes). */
const MAX_SOCKET_MESSAGE_CHARS = 900_000;

async function sendMessage(content) {
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

byId("new-session").addEventListener("click", async () => {
  sessionStorage.removeItem(SESSION_STORAGE);
  try {
    await openSession(null);
    say("A new conversation started.");
    await refreshSessions();
    el.composerInput.focus();
  } catch (error) {
    say(describe(error), true);
  }
});

// --- The sidebar: the user's sessions ------------------------------------------------------------------

/**
 * The first page of the user's sessions (the list keeps what it had when the server cannot be reached). The
 * older pages the user opened stay. `retries`: asks again, a second apart, while the open session's entry is
 * not yet what the page knows (its object writes the entry just after a change; a replica may lag).
 */
async function refreshSessions(retries = 0) {
  try {
    const page = await state.api.listSessions(undefined, state.sessionFilter);
    const first = new Set(page.sessions.map((s) => s.sessionId));
    const older = state.sessionsCursor ? state.sessions.slice(page.sessions.length) : [];
    state.sessions = [...page.sessions, ...older.filter((s) => !first.has(s.sessionId))];
    if (!state.sessionsCursor || older.length === 0) state.sessionsCursor = page.nextCursor;
    drawSessions();
    const current = page.sessions.find((s) => s.sessionId === state.sessionId);
    if (retries > 0 && (!current || current.status !== state.status)) {
      sessionsTimer = window.setTimeout(() => void refreshSessions(retries - 1), 1_000);
    }
  } catch {
    // Shown again at the next change.
  }
}

let sessionsTimer = 0;
/** Sessions write their list entry just after a change: the sidebar asks again a moment later. */
function refreshSessionsSoon() {
  clearTimeout(sessionsTimer);
  sessionsTimer = window.setTimeout(() => void refreshSessions(3), 400);
}

function drawSessions() {
  el.sessionList.replaceChildren(
    ...state.sessions.map((entry) =>
      sessionEntry(entry, {
        current: entry.sessionId === state.sessionId,
        modeName: state.modes.find((m) => m.key === entry.mode)?.displayName ?? entry.mode,
        onOpen: (sessionId) => void switchSession(sessionId),
        onManage: (shown) => openActions(shown),
      }),
    ),
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

let searchTimer = 0;
el.sessionSearch.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = window.setTimeout(refilterSessions, 250);
});
// Enter searches at once (the form never goes anywhere).
byId("session-filter", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  clearTimeout(searchTimer);
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

// --- Artifacts -------------------------------------------------------------------------------------

/** @type {any} */
let shownArtifact = null;

/** Opens an artifact in its dialog, drawn as Markdown. */
function openArtifact(artifact) {
  shownArtifact = artifact;
  el.artifactTitle.textContent = artifact.title;
  renderMarkdown(el.artifactBody, artifact.content);
  el.artifactDialog.showModal();
}

byId("artifact-download").addEventListener("click", () => {
  if (shownArtifact) downloadArtifact(shownArtifact);
});
byId("close-artifact").addEventListener("click", () => el.artifactDialog.close());

// --- A turn's timeline ---------------------------------------------------------------------------

/** The button that opened the timeline: the focus goes back to it when the dialog closes. @type {HTMLElement | null} */
let timelineOpener = null;

/**
 * Opens the waterfall of the turn `turnId` (its module is loaded the first time). @param {string} turnId
 * @param {HTMLElement | null} opener
 */
async function openTimeline(turnId, opener) {
  timelineOpener = opener;
  try {
    const [{ drawTimeline }, timeline] = await Promise.all([
      import("./js/timeline.js"),
      state.api.turnTimeline(state.sessionId, turnId),
    ]);
    if (!el.timelineDialog.open) el.timelineDialog.showModal();
    drawTimeline(el.timelineBody, el.timelineTip, timeline);
    el.timelineDialog.dataset.turnId = turnId;
    /** @type {HTMLElement | null} */ (
      el.timelineBody.querySelector(".timeline-bar") ?? byId("close-timeline")
    ).focus();
  } catch (error) {
    say(`Could not open the turn's timeline: ${describe(error)}`, true);
  }
}

byId("close-timeline").addEventListener("click", () => el.timelineDialog.close());
// Esc closes the dialog too (its cancel); either way the focus goes back to the answer's button.
el.timelineDialog.addEventListener("close", () => {
  el.timelineTip.hidden = true;
  // A redraw meanwhile replaced the answer's button: its successor, for the same turn, takes the focus.
  const turnId = el.timelineDialog.dataset.turnId ?? "";
  const redrawn = el.conversation.querySelector(`button[data-turn-id="${CSS.escape(turnId)}"]`);
  const opener = timelineOpener?.isConnected
    ? timelineOpener
    : timelineOpener && redrawn instanceof HTMLElement
      ? redrawn
      : el.composerInput;
  timelineOpener = null;
  opener.focus();
});

// --- Frames ----------------------------------------------------------------------------------------

/** @param {"running" | "waiting"} phase waiting: the turn is paused for approvals or a client's results */
function showWorking(phase = "running") {
  state.turnInFlight = true;
  el.turnBar.hidden = false;
  el.workingLabel.textContent = phase === "running" ? "Working…" : "Waiting for you…";
  el.app.dataset.turn = phase;
}

/** Says the finished answer once to screen readers (the conversation itself is redrawn, not announced). */
function announce(text) {
  el.announcer.textContent = text ? `The agent answered: ${text.slice(0, 500)}` : "The turn ended.";
}

function hideWorking() {
  state.turnInFlight = false;
  el.turnBar.hidden = true;
  setStream("", 0);
  el.app.dataset.turn = "idle";
}

/**
 * The answer streaming in, drawn as Markdown at most once a frame (no diagrams or highlighting until it is
 * done: the finished answer is drawn in the conversation). `coveredSeq`: deltas up to it are in `text` already.
 * @param {string} text
 * @param {number} [coveredSeq]
 */
function setStream(text, coveredSeq = state.stream.coveredSeq) {
  state.stream.text = text;
  state.stream.coveredSeq = coveredSeq;
  if (text === "") {
    el.streaming.hidden = true;
    el.streaming.textContent = "";
    return;
  }
  if (state.stream.drawPending) return;
  state.stream.drawPending = true;
  requestAnimationFrame(() => {
    state.stream.drawPending = false;
    // Shown once drawn, never as an empty box; a stream emptied meanwhile stays hidden.
    if (state.stream.text === "") return;
    renderMarkdown(el.streaming, state.stream.text, { live: true });
    el.streaming.hidden = false;
  });
}

function upsertToolCall(call) {
  state.turnCalls.set(call.id, call);
  const item = toolCallItem(call);
  const existing = el.toolCalls.querySelector(`[data-tool-call-id="${CSS.escape(call.id)}"]`);
  if (existing) existing.replaceWith(item);
  else el.toolCalls.append(item);
  el.workingCount.textContent = `(${state.turnCalls.size} tool call${state.turnCalls.size === 1 ? "" : "s"})`;
}

function handleFrame(frame) {
  switch (frame.type) {
    case "session_state":
      showMode(frame.mode);
      // Opened mid-turn: the answer so far, then only the deltas logged after it.
      if (typeof frame.streamedText === "string") setStream(frame.streamedText, frame.lastSeq);
      void reloadSession();
      break;
    case "turn_started":
      if (state.draft?.clientMessageId === frame.clientMessageId) state.draft = null;
      state.turnCalls.clear();
      el.toolCalls.replaceChildren();
      el.workingCount.textContent = "";
      setStream("", frame.seq);
      say("");
      showWorking();
      refreshSessionsSoon();
      break;
    case "assistant_delta":
      if (frame.seq > state.stream.coveredSeq) setStream(state.stream.text + frame.text);
      break;
    case "assistant_restarted":
    case "turn_resumed":
      // The model's stream broke mid-answer and the step starts again on another route, or a restart of the
      // session's object cut the turn off and it resumes: the cut-off call's text so far is void.
      if (frame.seq > state.stream.coveredSeq) {
        setStream(state.stream.text.slice(0, Math.max(0, state.stream.text.length - frame.discardedChars)));
      }
      if (frame.type === "turn_resumed") say("The session restarted mid-turn; the turn resumes where it was.");
      break;
    case "tool_call_started":
      // The model call that asked for this tool is over: its text joins the conversation (where a reload finds
      // it too), and the stream goes on with the next call's.
      if (frame.seq > state.stream.coveredSeq && state.stream.text) {
        el.conversation.append(messageItem({ role: "assistant", kind: "message", content: state.stream.text }));
        setStream("");
      }
      upsertToolCall(frame.toolCall);
      break;
    case "tool_call_completed":
      upsertToolCall(frame.toolCall);
      removeClientRequest(frame.toolCall.id);
      break;
    case "approval_required":
      // What the server says waits now: nothing decided earlier holds it back (a call id may come again).
      decidedIds.clear();
      for (const call of frame.toolCalls) upsertToolCall(call);
      showWorking("waiting");
      el.app.dataset.status = "awaiting_approval";
      refreshSessionsSoon();
      showApprovals(frame.toolCalls);
      // A redraw asked for before this frame (a mode switch's, say) would draw the session as it was, closing
      // the dialog: a newer one supersedes it.
      void reloadSession();
      break;
    case "client_tool_required":
      for (const call of frame.toolCalls) upsertToolCall(call);
      showWorking("waiting");
      el.app.dataset.status = "awaiting_client";
      refreshSessionsSoon();
      showClientRequests(frame.toolCalls);
      void reloadSession();
      break;
    case "elicitation_required":
      showWorking("waiting");
      showElicitation(frame.elicitation);
      void reloadSession();
      break;
    case "elicitation_answered":
      if (shownElicitation?.elicitationId === frame.elicitationId) showElicitation(null);
      break;
    case "mode_changed":
      showMode(frame.to);
      say(`Mode changed from ${frame.from} to ${frame.to}: ${frame.reason}`);
      if (frame.branchSessionId) offerSession(frame.branchSessionId);
      break;
    case "turn_completed":
      announce(frame.response.text);
      refreshSessionsSoon();
      void reloadSession().then(() => turnEnded(frame.turnId, frame.response));
      break;
    case "error":
      decidedIds.clear();
      say(frame.message, true);
      restoreDraft();
      // A refused action leaves the session as it was: redraw it, so nothing waits unseen.
      void reloadSession();
      break;
    case "pong":
      break;
    default:
      break;
  }
}

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

// Ctrl+K (Cmd+K on a Mac) searches the conversations, as in the chat apps people know: the list unfolds (on a
// phone it starts folded) and its search box takes the focus, its text selected for a new search.
document.addEventListener("keydown", (event) => {
  if (event.key.toLowerCase() !== "k" || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
  if (el.app.hidden || document.querySelector("dialog[open]")) return;
  event.preventDefault();
  byId("sessions-panel", HTMLDetailsElement).open = true;
  el.sessionSearch.focus();
  el.sessionSearch.select();
});

// --- Approvals -------------------------------------------------------------------------------------

let pendingApprovals = [];

/** The ids the dialog was last built for: the same calls again keep the user's choices and the dialog's state. */
let approvalIds = "";

function showApprovals(waiting) {
  const calls = waiting.filter((call) => !decidedIds.has(call.id));
  const ids = calls.map((call) => call.id).join(" ");
  if (ids === approvalIds) return;
  approvalIds = ids;
  pendingApprovals = calls;
  if (calls.length === 0) {
    if (el.approvalDialog.open) el.approvalDialog.close();
    el.clientTools.querySelector("[data-review-approvals]")?.remove();
    el.clientTools.hidden = el.clientTools.children.length === 0;
    return;
  }
  el.approvalCalls.replaceChildren(...calls.map(approvalItem));
  if (!el.approvalDialog.open) el.approvalDialog.showModal();
}

function setAllDecisions(value) {
  for (const input of el.approvalCalls.querySelectorAll(`input[type="radio"][value="${value}"]`)) {
    /** @type {HTMLInputElement} */ (input).checked = true;
  }
}

byId("approve-all").addEventListener("click", () => setAllDecisions("approve"));
byId("deny-all").addEventListener("click", () => setAllDecisions("deny"));

el.approvalForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const choices = pendingApprovals.map((call) => ({
    call,
    choice: /** @type {HTMLInputElement | null} */ (
      el.approvalCalls.querySelector(`input[name="decision-${CSS.escape(call.id)}"]:checked`)
    ),
    reason: /** @type {HTMLInputElement | null} */ (
      el.approvalCalls.querySelector(`#reason-${CSS.escape(call.id)}`)
    )?.value.trim(),
  }));
  // The form asks for a choice on every call before it submits; a call still without one is never sent as approved.
  if (choices.some(({ choice }) => choice === null)) {
    el.approvalForm.reportValidity();
    return;
  }
  const decisions = choices.map(({ call, choice, reason }) => ({
    toolCallId: call.id,
    approved: choice?.value === "approve",
    ...(reason ? { reason } : {}),
  }));
  for (const decision of decisions) decidedIds.add(decision.toolCallId);
  el.approvalDialog.close();
  pendingApprovals = [];
  // If the server refuses these decisions, its error forgets them, and the next redraw opens the dialog again.
  approvalIds = "";
  if (state.socket?.send({ type: "approval", decisions })) return;
  try {
    await state.api.submitApprovals(state.sessionId, decisions);
  } catch (error) {
    decidedIds.clear();
    say(describe(error), true);
  }
  await reloadSession();
});

el.approvalDialog.addEventListener("close", () => {
  if (pendingApprovals.length > 0) {
    say("Tool calls are waiting for your approval.", true);
    el.clientTools.hidden = false;
    if (!el.clientTools.querySelector("[data-review-approvals]")) {
      el.clientTools.prepend(
        h("button", {
          type: "button",
          "data-review-approvals": "",
          text: "Review the calls waiting for approval",
          onclick: (click) => {
            click.currentTarget.remove();
            if (el.clientTools.children.length === 0) el.clientTools.hidden = true;
            el.approvalDialog.showModal();
          },
        }),
      );
    }
  }
});

// --- Client-executed tools -------------------------------------------------------------------------

function showClientRequests(calls) {
  let first = null;
  for (const call of calls) {
    if (state.clientCalls.has(call.id)) continue;
    const item = clientToolItem(call, {
      onResult: (c, resultJson) => void sendToolResult({ toolCallId: c.id, resultJson }),
      onRefuse: (c, reason) => void sendToolResult({ toolCallId: c.id, errorMessage: reason }),
    });
    state.clientCalls.set(call.id, item);
    el.clientTools.append(item);
    first ??= item;
  }
  el.clientTools.hidden = el.clientTools.children.length === 0;
  // Focus moves only to a request that just arrived, never away from what the user is typing.
  first?.querySelector("textarea")?.focus();
}

function removeClientRequest(id) {
  state.clientCalls.get(id)?.remove();
  state.clientCalls.delete(id);
  el.clientTools.hidden = el.clientTools.children.length === 0;
}

async function sendToolResult(result) {
  try {
    JSON.parse(result.resultJson ?? "{}");
  } catch {
    say("The result is not valid JSON; fix it or refuse the request.", true);
    return;
  }
  if (state.socket?.send({ type: "tool_results", results: [result] })) return;
  try {
    await state.api.submitToolResults(state.sessionId, [result]);
    removeClientRequest(result.toolCallId);
  } catch (error) {
    say(describe(error), true);
  }
  await reloadSession();
}

// --- Elicitations ---------------------------------------------------------------------------------

/** The question an MCP server asks the user mid-call, as the dialog shows it (null: none). */
let shownElicitation = null;

/** Shows the server's question as a form built from its schema (the workflow form generator); null hides it. */
function showElicitation(question) {
  if (question?.elicitationId === shownElicitation?.elicitationId) return;
  shownElicitation = question;
  if (!question) {
    if (el.elicitationDialog.open) el.elicitationDialog.close();
    return;
  }
  el.elicitationSource.textContent = `MCP server ${question.server} asks this for its tool ${question.tool}.`;
  // The dialog stays until the answer is taken (elicitation_answered, or the answer's own reply), so a refused
  // answer is shown beside its field with everything the user typed still there.
  const answer = async (body) => {
    try {
      await state.api.answerElicitation(state.sessionId, question.elicitationId, body);
      if (shownElicitation?.elicitationId === question.elicitationId) showElicitation(null);
    } catch (error) {
      if (error instanceof ApiError && error.status === 400 && shownElicitation === question) {
        showWorkflowError(el.elicitationForm, error, "content.");
        return;
      }
      say(describe(error), true);
    }
    await reloadSession();
  };
  fillSchemaForm(el.elicitationForm, {
    title: question.message,
    description: "Your answer goes to the server, and its tool call goes on.",
    schema: question.requestedSchema,
    idPrefix: `elicit-${question.elicitationId}`,
    submitLabel: "Send answer",
    actions: [
      { label: "Decline", onClick: () => void answer({ action: "decline" }) },
      { label: "Cancel", onClick: () => void answer({ action: "cancel" }) },
    ],
    onSubmit: (content) => void answer({ action: "accept", content }),
  });
  if (!el.elicitationDialog.open) el.elicitationDialog.showModal();
  /** @type {HTMLElement | null} */ (el.elicitationForm.querySelector("input, select, textarea"))?.focus();
}

// --- Workflows -------------------------------------------------------------------------------------

function showWorkflowList() {
  el.workflowForm.hidden = true;
  el.workflowList.hidden = false;
  el.workflowList.replaceChildren(...workflowList(state.categories, showWorkflowForm));
}

function showWorkflowForm(workflow) {
  el.workflowList.hidden = true;
  el.workflowForm.hidden = false;
  fillWorkflowForm(
    el.workflowForm,
    workflow,
    state.modes,
    async (parameters) => {
      try {
        const result = await state.api.runWorkflow(state.sessionId, workflow.id, parameters);
        el.workflowDialog.close();
        say(result.message);
        if (typeof result.data?.branchSessionId === "string") offerSession(result.data.branchSessionId);
        await reloadSession();
      } catch (error) {
        if (error instanceof ApiError && error.status === 400) showWorkflowError(el.workflowForm, error);
        else showWorkflowError(el.workflowForm, { message: describe(error), param: null });
      }
    },
    showWorkflowList,
  );
  /** @type {HTMLElement | null} */ (el.workflowForm.querySelector("input, select, textarea"))?.focus();
}

byId("open-workflows").addEventListener("click", () => {
  showWorkflowList();
  el.workflowDialog.showModal();
});
byId("close-workflows").addEventListener("click", () => el.workflowDialog.close());

// --- Connected apps (OAuth grants) ------------------------------------------------------------------

const grantsDialog = byId("grants-dialog", HTMLDialogElement);

async function showGrants() {
  const list = byId("grants-list");
  const status = byId("grants-status");
  status.textContent = "";
  try {
    const { grants } = await state.api.listGrants();
    list.replaceChildren(
      ...grants.map((grant) =>
        h(
          "li",
          { "data-grant-id": grant.id },
          h("strong", { text: grant.clientName }),
          ` (${grant.scopes.join(", ")}), allowed ${grant.createdAt.slice(0, 10)} `,
          h("button", {
            type: "button",
            class: "danger",
            text: "Revoke",
            "aria-label": `Revoke ${grant.clientName}`,
            onclick: async () => {
              try {
                await state.api.revokeGrant(grant.id);
                await showGrants();
                status.textContent = `${grant.clientName} can no longer act for you.`;
              } catch (error) {
                status.textContent = describe(error);
              }
            },
          }),
        ),
      ),
    );
    if (grants.length === 0) list.replaceChildren(h("li", { text: "No app is connected." }));
  } catch (error) {
    status.textContent = describe(error);
  }
}

byId("open-grants").addEventListener("click", () => {
  grantsDialog.showModal();
  void showGrants();
});
byId("close-grants").addEventListener("click", () => grantsDialog.close());

// --- Start -----------------------------------------------------------------------------------------

/** Offers single sign-on on the sign-in page when the server has an identity provider. */
async function offerSingleSignOn() {
  const { singleSignOn } = await ApiClient.providers().catch(() => ({ singleSignOn: null }));
  if (!singleSignOn) return;
  const link = byId("sso-link", HTMLAnchorElement);
  link.href = `${singleSignOn.loginUrl}?return_to=${encodeURIComponent(location.pathname)}`;
  byId("sso").hidden = false;
}

/** Shows the sign-in page. */
function askToSignIn() {
  el.signIn.hidden = false;
  void offerSingleSignOn();
  el.apiKey.focus();
}

const storedKey = sessionStorage.getItem(KEY_STORAGE);
if (storedKey) {
  signIn(new ApiClient({ apiKey: storedKey })).catch((error) => {
    el.app.hidden = true;
    el.signIn.hidden = false;
    if (error instanceof ApiError && error.status === 401) {
      sessionStorage.removeItem(KEY_STORAGE);
      el.signInError.textContent = `Your saved key was refused: ${error.message}`;
    } else {
      el.signInError.textContent = `Could not reach the server to sign you in again: ${describe(error)}`;
    }
    askToSignIn();
  });
} else {
  ApiClient.ofBrowserSession()
    .then((api) => (api ? signIn(api) : askToSignIn()))
    .catch((error) => {
      el.signInError.textContent = describe(error);
      askToSignIn();
    });
}

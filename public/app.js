// @ts-check
// The Aptix console: a client of the public API and the session WebSocket, like any other. This module signs the
// person in and out and wires the header; each other job has its module in js/ (connection, conversation view,
// composer, dialogs, list), and the frames the server sends go through one reducer over one state object.
import { ApiClient, ApiError, KEY_STORAGE } from "./js/api.js";
import "./js/approvals.js";
import "./js/composer.js";
import { openSession, reloadSession } from "./js/connection.js";
import { openTimeline } from "./js/dialogs.js";
import { byId, h } from "./js/dom.js";
import { el } from "./js/elements.js";
import { refreshSessions } from "./js/list.js";
import "./js/memory.js";
import "./js/message-search.js";
import "./js/schedules.js";
import { markdownReady } from "./js/markdown.js";
import { describe, say } from "./js/status.js";
import { SESSION_STORAGE, state } from "./js/store.js";

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
  state.adminCheck = api.request("GET", "/admin/budget").then(
    () => {
      byId("open-admin").hidden = false;
      state.isAdmin = true;
      return true;
    },
    () => false,
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

// --- The header's menu (a phone's) ------------------------------------------------------------------

// On a phone the header's actions (Workflows, Schedules, Memory, Connected apps, Admin, Sign out) fold behind one Menu button: one tap
// opens them, one more runs one. Choosing one, Esc, or a tap elsewhere folds them again.
const menuButton = byId("open-menu", HTMLButtonElement);
const menu = byId("header-actions");

/** @param {boolean} open @param {{ focusButton?: boolean }} [options] */
function showMenu(open, options = {}) {
  menuButton.setAttribute("aria-expanded", String(open));
  menu.classList.toggle("open", open);
  if (open) /** @type {HTMLElement | null} */ (menu.querySelector("button:not([hidden]), a:not([hidden])"))?.focus();
  else if (options.focusButton) menuButton.focus();
}

menuButton.addEventListener("click", () => showMenu(menuButton.getAttribute("aria-expanded") !== "true"));
menu.addEventListener("click", (event) => {
  if (event.target instanceof Element && event.target.closest("button, a")) showMenu(false);
});
// Esc folds an open menu before anything else takes it (Stop's Esc leaves a key another handler took).
document.addEventListener(
  "keydown",
  (event) => {
    if (event.key !== "Escape" || !menu.classList.contains("open")) return;
    event.preventDefault();
    showMenu(false, { focusButton: true });
  },
  { capture: true },
);
document.addEventListener("click", (event) => {
  if (!menu.classList.contains("open") || !(event.target instanceof Node)) return;
  if (!menu.contains(event.target) && !menuButton.contains(event.target)) showMenu(false);
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

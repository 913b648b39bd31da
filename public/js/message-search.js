// @ts-check
// Ctrl+K finds messages as well as titles: while the sidebar's search box lists the conversations whose title
// matches, the words (two characters or more) are also looked up in the text of every message of the person's
// conversations (GET /context/search, ranked, paged), each result with its conversation's title and a snippet with
// the match marked. Opening one opens its conversation at that message, highlighted for a moment. docs/search.md.
import { openSession } from "./connection.js";
import { revealMessage } from "./conversation-view.js";
import { byId, h } from "./dom.js";
import { el } from "./elements.js";
import { drawSessions } from "./list.js";
import { describe, say } from "./status.js";
import { state } from "./store.js";

/** Fewer characters than this match too much to be worth a search. */
const MIN_CHARS = 2;
const PAGE = 10;
const DEBOUNCE_MS = 250;

const section = byId("message-results");
const list = byId("message-result-list");
const status = byId("message-results-status");
const more = byId("more-message-results", HTMLButtonElement);

/** The words shown, the next page's cursor, the pending search, and a counter that lets a stale answer go. */
const shown = { q: "", /** @type {string | null} */ cursor: null, timer: 0, asked: 0 };

/**
 * The snippet's nodes: its text, and its matches in <mark>. The server escapes the text and adds only <mark>; it is
 * still parsed into an inert document and rebuilt from text and marks alone, so nothing else can get in.
 * @param {string} snippet
 */
export function snippetNodes(snippet) {
  const parsed = new DOMParser().parseFromString(`<body>${snippet}</body>`, "text/html").body;
  return [...parsed.childNodes].map((node) =>
    node.nodeName === "MARK"
      ? h("mark", { text: node.textContent ?? "" })
      : document.createTextNode(node.textContent ?? ""),
  );
}

/** @param {string} role */
const who = (role) => (role === "user" ? "You" : role === "assistant" ? "Agent" : "Tool");

/** @param {any} result */
function resultItem(result) {
  const title = result.title ?? "New conversation";
  const snippet = h("span", { class: "message-result-snippet" }, ...snippetNodes(result.snippet));
  return h(
    "li",
    { "data-session-id": result.sessionId, "data-seq": String(result.seq) },
    h(
      "button",
      {
        type: "button",
        class: "message-result",
        onclick: () => void openResult(result),
      },
      h("span", { class: "session-title", text: title }),
      h("span", {
        class: "session-meta",
        text: `${who(result.role)} · ${new Date(result.createdAt).toLocaleDateString()}`,
      }),
      result.archived ? h("span", { class: "badge quiet", text: "Archived" }) : null,
      snippet,
    ),
  );
}

/** Opens the result's conversation at its message. @param {any} result */
async function openResult(result) {
  try {
    if (result.sessionId !== state.sessionId) {
      await openSession(result.sessionId);
      drawSessions();
      // Opening shows the conversation's end a frame later: the message is shown after that.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    }
    if (!(await revealMessage(result.seq))) say("That message is no longer in the conversation.", true);
  } catch (error) {
    say(describe(error), true);
  }
}

/** @param {string | null} cursor */
async function search(cursor) {
  const asked = ++shown.asked;
  const query = new URLSearchParams({ q: shown.q, limit: String(PAGE) });
  if (cursor) query.set("cursor", cursor);
  try {
    const page = await state.api.request("GET", `/context/search?${query}`);
    if (asked !== shown.asked) return;
    const items = page.results.map(resultItem);
    if (cursor) list.append(...items);
    else list.replaceChildren(...items);
    shown.cursor = page.nextCursor;
    more.hidden = !page.nextCursor;
    const count = list.children.length;
    status.textContent =
      count === 0
        ? "No message matches."
        : `${count}${page.nextCursor ? "+" : ""} ${count === 1 ? "message" : "messages"} found.`;
  } catch (error) {
    if (asked === shown.asked) status.textContent = describe(error);
  }
}

function searchNow() {
  clearTimeout(shown.timer);
  const q = el.sessionSearch.value.trim();
  if (q === shown.q && !section.hidden) return;
  shown.q = q;
  shown.cursor = null;
  if (q.length < MIN_CHARS) {
    shown.asked++;
    section.hidden = true;
    list.replaceChildren();
    return;
  }
  section.hidden = false;
  void search(null);
}

el.sessionSearch.addEventListener("input", () => {
  clearTimeout(shown.timer);
  shown.timer = window.setTimeout(searchNow, DEBOUNCE_MS);
});
byId("session-filter", HTMLFormElement).addEventListener("submit", searchNow);
more.addEventListener("click", () => void search(shown.cursor));
// Down from the search box goes to the first message found (the conversations' list is a Tab away).
el.sessionSearch.addEventListener("keydown", (event) => {
  if (event.key !== "ArrowDown" || section.hidden) return;
  const first = list.querySelector("button");
  if (!(first instanceof HTMLButtonElement)) return;
  event.preventDefault();
  first.focus();
});

// @ts-check
// A conversation's branches in the console: Copy on every message, Edit on the person's own messages (a new branch
// before that message, the edited text sent in it), Regenerate on the last answer (a branch before the last
// message, sent again), and the switcher ("‹ 2 / 3 ›") where the branches diverge. A branch is a session of its
// own (POST /context/sessions/:id/branches): the conversation it came from is never rewritten.
import { h } from "./dom.js";

/** How long the Copy button says "Copied". */
const COPIED_MS = 2_000;

/** The tools a message may have, by class: the one with the focus is found again after a redraw. */
const TOOL_KINDS = ["branch-previous", "branch-next", "message-copy", "message-edit", "message-regenerate"];

/**
 * @typedef {{sessionId: string, beforeMessage: number, seededThrough: number}} BranchOrigin
 * @typedef {{sessionId: string, branchOf: BranchOrigin | null}} BranchedView
 * @typedef {{seq?: number, role: string, kind: string, content: string | null}} ShownMessage
 * @typedef {{sessionId: string, createdAt: string, branchOf: {sessionId: string, beforeMessage: number} | null}} ListedSession
 * @typedef {{ids: string[], index: number}} BranchPoint The sessions that are alternatives from one message on, and which is open.
 */

/**
 * @typedef {object} BranchDeps
 * @property {() => import("./api.js").ApiClient} api
 * @property {(sessionId: string) => Promise<void>} open Opens the session (its view, its socket, the sidebar).
 * @property {(content: string) => Promise<void>} send Sends a message in the open session.
 * @property {(text: string, isError?: boolean) => void} say
 * @property {() => void} redraw Draws the open conversation again.
 */

export class Branches {
  /** @param {BranchDeps} deps */
  constructor(deps) {
    this.deps = deps;
    /** @type {BranchedView | null} The open session, as far as its branches go. */
    this.view = null;
    /** @type {Map<number, BranchPoint>} By the seq of the open session's message where they diverge. */
    this.points = new Map();
    /** A branch is being made (one at a time). */
    this.branching = false;
    /**
     * @type {{sessionId: string, seq: number, text: string} | null} The message being edited, and the text so far: a
     * redraw of the conversation (a frame, a reload) draws the editor again as it was.
     */
    this.editing = null;
    /** @type {Map<string, number>} Until when a message's Copy button says "Copied", by session and seq. */
    this.copied = new Map();
    /** @type {"previous" | "next" | null} The switcher was used: the next one drawn takes the focus. */
    this.focusSwitcher = null;
  }

  /**
   * Learns the open session's alternatives (the branches started from it, and, when it is a branch itself, its
   * source and the source's other branches from the same message), then draws the conversation again.
   * @param {BranchedView} view
   */
  async load(view) {
    this.view = { sessionId: view.sessionId, branchOf: view.branchOf ?? null };
    this.points = new Map();
    this.editing = null;
    const api = this.deps.api();
    try {
      const source = view.branchOf?.sessionId;
      const [children, siblings, sourceThere] = await Promise.all([
        api.listSessions(undefined, { branchOf: view.sessionId, limit: 100 }),
        source ? api.listSessions(undefined, { branchOf: source, limit: 100 }) : null,
        // A source deleted since is left out of the switcher (opening it would start a new conversation instead).
        source
          ? api.getSession(source).then(
              () => true,
              (error) => (error?.status === 404 ? false : Promise.reject(error)),
            )
          : false,
      ]);
      if (this.view?.sessionId !== view.sessionId) return;
      this.points = branchPoints(view, children.sessions, siblings?.sessions ?? [], { sourceThere });
      this.deps.redraw();
      this.focusSwitcher = null;
    } catch {
      this.focusSwitcher = null;
      this.deps.say("Could not load this conversation's other branches; reopen it to try again.", true);
    }
  }

  /**
   * Adds the message's tools under it: Copy; Edit on the person's own messages; Regenerate on the last answer; the
   * switcher at a message where branches diverge.
   * @param {HTMLElement} item @param {ShownMessage} message
   * @param {{sessionId: string, regenerate?: ShownMessage}} options the session drawn; `regenerate`: the message is
   * the last answer, to `regenerate` again
   */
  decorate(item, message, options) {
    const text = message.content ?? "";
    const seq = message.seq;
    const own = message.role === "user" && message.kind === "message" && seq !== undefined;
    // The branch points are the session's whose load() ran last: a session drawn before its own are known has none.
    const known = this.view?.sessionId === options.sessionId;
    const point = seq === undefined || !known ? undefined : this.points.get(seq);
    if (seq !== undefined) item.dataset.seq = String(seq);
    const tools = h(
      "div",
      { class: "message-tools" },
      point ? this.switcher(point) : null,
      text ? this.copyButton(text, `${options.sessionId} ${seq ?? ""}`, seq !== undefined) : null,
      own ? this.editButton(item, message) : null,
      options.regenerate ? this.regenerateButton(options.regenerate) : null,
    );
    this.keepFocus(tools, seq);
    // Beside the answer's Timeline button when it has one: one row of actions a message.
    const actions = item.querySelector(":scope > .message-actions");
    if (actions) actions.append(...tools.childNodes);
    else item.append(tools);
    const editing = this.editing;
    if (own && editing && editing.seq === seq && editing.sessionId === options.sessionId) {
      // Drawn again while it was being edited: the editor as it was, with the focus if it had it.
      const focused = document.activeElement?.classList.contains("message-editor-input") ?? false;
      this.openEditor(item, message, { text: editing.text, focus: focused });
    }
  }

  /**
   * A tool of this message that has the focus keeps it when the conversation is drawn again (a frame, a reload):
   * the same tool in the new drawing takes it, once the drawing is on the page.
   * @param {HTMLElement} tools @param {number | undefined} seq
   */
  keepFocus(tools, seq) {
    const active = document.activeElement;
    if (seq === undefined || !(active instanceof HTMLElement) || !active.classList.contains("message-tool")) return;
    const shown = active.closest("li.message");
    if (!(shown instanceof HTMLElement) || shown.dataset.seq !== String(seq)) return;
    const kind = TOOL_KINDS.find((name) => active.classList.contains(name));
    const same = kind ? tools.querySelector(`.${kind}`) : null;
    if (same instanceof HTMLElement) queueMicrotask(() => same.focus());
  }

  /**
   * A labelled Copy button that says "Copied" once the text is on the clipboard (still after a redraw).
   * @param {string} text @param {string} key the message's session and seq @param {boolean} kept the key is one
   */
  copyButton(text, key, kept) {
    const button = h("button", { type: "button", class: "quiet message-copy message-tool" });
    const show = (/** @type {string} */ label) => {
      button.textContent = label;
      button.setAttribute("aria-label", label === "Copy" ? "Copy this message" : label);
    };
    const until = kept ? (this.copied.get(key) ?? 0) : 0;
    show(until > Date.now() ? "Copied" : "Copy");
    if (until > Date.now()) window.setTimeout(() => show("Copy"), until - Date.now());
    button.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(text);
      } catch {
        show("Could not copy");
        window.setTimeout(() => show("Copy"), COPIED_MS);
        return;
      }
      if (kept) this.copied.set(key, Date.now() + COPIED_MS);
      show("Copied");
      window.setTimeout(() => show("Copy"), COPIED_MS);
    });
    return button;
  }

  /** @param {BranchPoint} point */
  switcher(point) {
    const { ids, index } = point;
    const go = (/** @type {number} */ to, /** @type {"previous" | "next"} */ way) => {
      const target = ids[to];
      if (!target) return;
      // The switcher of the session opened takes the focus back, so the keyboard can go on moving.
      this.focusSwitcher = way;
      void this.deps.open(target).catch((error) => {
        this.focusSwitcher = null;
        this.deps.say(errorText(error), true);
      });
    };
    const previous = h("button", {
      type: "button",
      class: "quiet branch-previous message-tool",
      "aria-label": "Previous branch",
      text: "‹",
      disabled: index === 0,
      onclick: () => go(index - 1, "previous"),
    });
    const next = h("button", {
      type: "button",
      class: "quiet branch-next message-tool",
      "aria-label": "Next branch",
      text: "›",
      disabled: index === ids.length - 1,
      onclick: () => go(index + 1, "next"),
    });
    if (this.focusSwitcher) {
      const way = this.focusSwitcher;
      this.focusSwitcher = null;
      // Once the conversation it is drawn in is on the page (it is built before it replaces the old one).
      queueMicrotask(() => ((way === "previous" && !previous.disabled) || next.disabled ? previous : next).focus());
    }
    return h(
      "div",
      { class: "branch-switcher", role: "group", "aria-label": `Branch ${index + 1} of ${ids.length}` },
      previous,
      h("span", { class: "branch-position", "aria-hidden": "true", text: `${index + 1} / ${ids.length}` }),
      next,
    );
  }

  /** @param {HTMLElement} item @param {ShownMessage} message */
  editButton(item, message) {
    return h("button", {
      type: "button",
      class: "quiet message-edit message-tool",
      "aria-label": "Edit this message (a new branch from here)",
      text: "Edit",
      onclick: () => this.openEditor(item, message),
    });
  }

  /** The last answer again: a branch before the person's last message, which is sent again in it. @param {ShownMessage} asked */
  regenerateButton(asked) {
    return h("button", {
      type: "button",
      class: "quiet message-regenerate message-tool",
      "aria-label": "Regenerate this answer (a new branch)",
      text: "Regenerate",
      onclick: () => void this.branchAndSend(asked, asked.content ?? ""),
    });
  }

  /**
   * The message's text in an editor in its place; sending it starts a branch.
   * @param {HTMLElement} item @param {ShownMessage} message
   * @param {{text?: string, focus?: boolean}} [options] the text so far (a redraw), and whether to take the focus
   */
  openEditor(item, message, options = {}) {
    if (item.querySelector(".message-editor") || message.seq === undefined || !this.view) return;
    const shown = [...item.children];
    const text = options.text ?? message.content ?? "";
    const editing = { sessionId: this.view.sessionId, seq: message.seq, text };
    this.editing = editing;
    const input = h("textarea", {
      class: "message-editor-input",
      rows: 3,
      value: text,
      "aria-label": "Your message, edited",
    });
    input.addEventListener("input", () => {
      editing.text = input.value;
    });
    const close = () => {
      if (this.editing === editing) this.editing = null;
      editor.remove();
      for (const child of shown) /** @type {HTMLElement} */ (child).hidden = false;
      const edit = item.querySelector(".message-edit");
      if (edit instanceof HTMLElement) edit.focus();
    };
    const editor = h(
      "form",
      { class: "message-editor", "aria-label": "Edit your message" },
      input,
      h(
        "div",
        { class: "message-editor-actions" },
        h("button", { type: "submit", text: "Send as a new branch" }),
        h("button", { type: "button", class: "quiet", text: "Cancel", onclick: close }),
      ),
    );
    editor.addEventListener("submit", (event) => {
      event.preventDefault();
      const content = input.value.trim();
      if (!content) return;
      if (this.editing === editing) this.editing = null;
      void this.branchAndSend(message, content);
    });
    input.addEventListener("keydown", (event) => {
      // Esc closes the editor (and does not stop a running turn); Enter sends, Shift+Enter is a new line.
      if (event.key === "Escape") {
        event.preventDefault();
        close();
      } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        editor.requestSubmit();
      }
    });
    for (const child of shown) /** @type {HTMLElement} */ (child).hidden = true;
    item.append(editor);
    if (options.focus === false) return;
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  /**
   * A new branch before `message`, opened, with `content` sent in it. A message where the open session itself
   * diverged from its source is branched from the source instead, so every alternative of that message stays side by
   * side in one switcher.
   * @param {ShownMessage} message @param {string} content
   */
  async branchAndSend(message, content) {
    const view = this.view;
    if (!view || message.seq === undefined || !content || this.branching) return;
    const origin = view.branchOf;
    const from =
      origin && message.seq === origin.seededThrough + 1
        ? { sessionId: origin.sessionId, beforeMessage: origin.beforeMessage }
        : { sessionId: view.sessionId, beforeMessage: message.seq };
    this.branching = true;
    try {
      const api = this.deps.api();
      const here = { sessionId: view.sessionId, beforeMessage: message.seq };
      // The source deleted since: the branch is made from the open session itself.
      const branch = await api
        .createBranch(from.sessionId, from.beforeMessage)
        .catch((error) =>
          error?.status === 404 && from.sessionId !== here.sessionId
            ? api.createBranch(here.sessionId, here.beforeMessage)
            : Promise.reject(error),
        );
      await this.deps.open(branch.sessionId);
      this.deps.say("A new branch: the conversation you left keeps its answer.");
      await this.deps.send(content);
    } catch (error) {
      this.deps.say(errorText(error), true);
    } finally {
      this.branching = false;
    }
  }
}

/**
 * The open session's branch points: at each message branches were started before, the session and those branches;
 * when it is a branch itself, at its first own message, its source and the source's branches from the same message.
 * @param {BranchedView} view
 * @param {ListedSession[]} children
 * @param {ListedSession[]} siblings
 * @param {{sourceThere: boolean}} source whether the open branch's source is still there (not deleted)
 * @returns {Map<number, BranchPoint>}
 */
export function branchPoints(view, children, siblings, source) {
  const byAge = (/** @type {{createdAt: string}} */ a, /** @type {{createdAt: string}} */ b) =>
    a.createdAt.localeCompare(b.createdAt);
  /** @type {Map<number, BranchPoint>} */
  const points = new Map();
  for (const child of [...children].sort(byAge)) {
    const at = child.branchOf?.beforeMessage;
    if (at === undefined) continue;
    const point = points.get(at) ?? { ids: [view.sessionId], index: 0 };
    point.ids.push(child.sessionId);
    points.set(at, point);
  }
  const origin = view.branchOf;
  if (origin) {
    const alike = [...siblings].sort(byAge).filter((s) => s.branchOf?.beforeMessage === origin.beforeMessage);
    const ids = [...(source.sourceThere ? [origin.sessionId] : []), ...alike.map((s) => s.sessionId)];
    if (!ids.includes(view.sessionId)) ids.push(view.sessionId);
    if (ids.length > 1) points.set(origin.seededThrough + 1, { ids, index: ids.indexOf(view.sessionId) });
  }
  return points;
}

/** @param {unknown} error */
function errorText(error) {
  return error instanceof Error && error.name === "ApiError"
    ? error.message
    : "The server could not be reached; try again.";
}

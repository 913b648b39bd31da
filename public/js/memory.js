// @ts-check
// The Memory panel: what the agent keeps about the person (GET /context/memories, paged, found by words), each with
// its text, whether it is pinned, whose it is (the org's are marked, and only an admin changes them) and the
// conversation it came from; correct one (PATCH), pin or unpin it, delete it, add one, or forget all of one's own
// after a confirmation that says how many go. docs/memory.md.
import { ApiError } from "./api.js";
import { openSession } from "./connection.js";
import { byId, h } from "./dom.js";
import { drawSessions } from "./list.js";
import { describe } from "./status.js";
import { state } from "./store.js";

/** A page of the list (the server's default), and of the count before "Forget everything" (its most). */
const PAGE = 50;
const COUNT_PAGE = 100;

const dialog = byId("memory-dialog", HTMLDialogElement);
const list = byId("memory-list");
const status = byId("memory-status");
const offNote = byId("memory-off");
const search = byId("memory-search", HTMLInputElement);
const more = byId("more-memories", HTMLButtonElement);
const addForm = byId("memory-add", HTMLFormElement);
const newText = byId("memory-new", HTMLTextAreaElement);
const newPinned = byId("memory-new-pinned", HTMLInputElement);
const newOrg = byId("memory-new-org", HTMLInputElement);
const newOrgLabel = byId("memory-new-org-label");
const forgetDialog = byId("forget-dialog", HTMLDialogElement);
const forgetText = byId("forget-text");

/** The list as drawn: the memories shown, the next page's cursor and the words it was found by. */
const shown = { /** @type {any[]} */ memories: [], /** @type {string | null} */ cursor: null, q: "", timer: 0 };

/** @param {string} id */
const pathOf = (id) => `/context/memories/${encodeURIComponent(id)}`;

/** @param {string} iso */
const day = (iso) => new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" });

/** Whether memory is on for the org: an admin can read the switch; anyone else learns it when adding is refused. */
async function readPolicy() {
  if (!(await state.adminCheck)) return;
  try {
    const { enabled } = await state.api.request("GET", "/admin/memory");
    offNote.hidden = enabled !== false;
  } catch {
    // The note stays as it was: the list itself does not depend on it.
  }
}

/**
 * Runs a change, then draws the list again and says `done` (or what went wrong). The focus, whose button the redraw
 * replaced, goes to the same memory's first action (or, the memory gone, the search box).
 * @param {() => Promise<unknown>} change @param {string} done @param {string} id the memory changed
 */
async function act(change, done, id) {
  try {
    await change();
    await showMemories();
    status.textContent = done;
  } catch (error) {
    status.textContent = describe(error);
  }
  if (dialog.contains(document.activeElement) && document.activeElement !== document.body) return;
  const again = list.querySelector(`li[data-memory-id="${CSS.escape(id)}"] .memory-actions button`);
  (again instanceof HTMLElement ? again : search).focus();
}

/** A short form of a memory's text, for the names of its buttons. @param {string} text */
const short = (text) => (text.length > 40 ? `${text.slice(0, 39)}…` : text);

/** The memory's text becomes a form that corrects it (Save, Cancel; Esc is the dialog's). @param {HTMLElement} item @param {any} memory */
function editItem(item, memory) {
  const inputId = `memory-edit-${memory.id}`;
  const input = h("textarea", { id: inputId, rows: 2, maxLength: 500, required: true, value: memory.text });
  const form = h(
    "form",
    { class: "memory-edit" },
    h("label", { for: inputId, text: "Correct this memory" }),
    input,
    h(
      "span",
      { class: "memory-actions" },
      h("button", { type: "submit", text: "Save" }),
      h("button", {
        type: "button",
        class: "quiet",
        text: "Cancel",
        onclick: () => void act(async () => {}, "", memory.id),
      }),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(
      () => state.api.request("PATCH", pathOf(memory.id), { text: input.value }),
      "The memory is corrected.",
      memory.id,
    );
  });
  item.querySelector(".memory-actions")?.remove();
  item.querySelector(".memory-text")?.replaceWith(form);
  input.focus();
}

/** @param {any} memory */
function memoryItem(memory) {
  const whose = memory.scope === "org" ? "your organization's" : "yours";
  // The org's memories are an admin's to change; anyone else sees them, marked.
  const mine = memory.scope === "user" || state.isAdmin;
  const source = memory.source?.sessionId
    ? h("button", {
        type: "button",
        class: "link",
        text: "From a conversation",
        "aria-label": `Open the conversation “${short(memory.text)}” came from`,
        onclick: async () => {
          dialog.close();
          try {
            await openSession(memory.source.sessionId);
            drawSessions();
          } catch (error) {
            status.textContent = describe(error);
            dialog.showModal();
          }
        },
      })
    : h("span", { text: "Added by hand" });
  const item = h(
    "li",
    { "data-memory-id": memory.id, "data-scope": memory.scope, class: memory.pinned ? "pinned" : "" },
    h("span", { class: "memory-text", text: memory.text }),
    h(
      "span",
      { class: "memory-meta" },
      memory.scope === "org" ? h("span", { class: "badge", text: "Organization" }) : null,
      memory.pinned ? h("span", { class: "badge quiet", text: "Pinned" }) : null,
      h("span", {
        text: `Saved ${day(memory.createdAt)}${memory.updatedAt !== memory.createdAt ? `, changed ${day(memory.updatedAt)}` : ""}`,
      }),
      source,
    ),
  );
  if (!mine) {
    item.append(h("span", { class: "memory-meta", text: `This memory is ${whose}: an admin can change it.` }));
    return item;
  }
  item.append(
    h(
      "span",
      { class: "memory-actions" },
      h("button", {
        type: "button",
        class: "quiet",
        text: "Edit",
        "aria-label": `Edit: ${short(memory.text)}`,
        onclick: () => editItem(item, memory),
      }),
      h("button", {
        type: "button",
        class: "quiet",
        text: memory.pinned ? "Unpin" : "Pin",
        "aria-label": `${memory.pinned ? "Unpin" : "Pin"}: ${short(memory.text)}`,
        onclick: () =>
          act(
            () => state.api.request("PATCH", pathOf(memory.id), { pinned: !memory.pinned }),
            memory.pinned ? "The memory is no longer pinned." : "The memory is pinned: the agent always uses it.",
            memory.id,
          ),
      }),
      h("button", {
        type: "button",
        class: "danger",
        text: "Delete",
        "aria-label": `Delete: ${short(memory.text)}`,
        onclick: () => act(() => state.api.request("DELETE", pathOf(memory.id)), "The memory is deleted.", memory.id),
      }),
    ),
  );
  return item;
}

/** What the list says when it has nothing to show. */
function emptyItem() {
  if (shown.q) return h("li", { text: `No memory matches “${shown.q}”.` });
  return h(
    "li",
    { class: "memory-empty" },
    "The agent remembers nothing about you yet. Tell it “remember that …” in a conversation and it saves the fact here, or add one below; it then uses them in every conversation.",
  );
}

/** @param {string | null} cursor */
function pageQuery(cursor) {
  const query = new URLSearchParams({ limit: String(PAGE) });
  if (shown.q) query.set("q", shown.q);
  if (cursor) query.set("cursor", cursor);
  return `/context/memories?${query}`;
}

function draw() {
  list.replaceChildren(...shown.memories.map(memoryItem));
  if (shown.memories.length === 0) list.replaceChildren(emptyItem());
  more.hidden = !shown.cursor;
  list.setAttribute("aria-busy", "false");
}

/** Draws the first page of the person's memories (those the filter's words find). */
export async function showMemories() {
  status.textContent = "";
  shown.q = search.value.trim();
  try {
    const page = await state.api.request("GET", pageQuery(null));
    shown.memories = page.memories;
    shown.cursor = page.nextCursor;
    draw();
  } catch (error) {
    status.textContent = describe(error);
  }
}

more.addEventListener("click", async () => {
  try {
    const page = await state.api.request("GET", pageQuery(shown.cursor));
    const known = new Set(shown.memories.map((m) => m.id));
    shown.memories.push(...page.memories.filter((/** @type {any} */ m) => !known.has(m.id)));
    shown.cursor = page.nextCursor;
    draw();
  } catch (error) {
    status.textContent = describe(error);
  }
});

search.addEventListener("input", () => {
  clearTimeout(shown.timer);
  shown.timer = window.setTimeout(() => void showMemories(), 250);
});
byId("memory-filter", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  clearTimeout(shown.timer);
  void showMemories();
});

addForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  status.textContent = "";
  const body = { text: newText.value, pinned: newPinned.checked, scope: newOrg.checked ? "org" : "user" };
  try {
    await state.api.request("POST", "/context/memories", body);
    newText.value = "";
    newPinned.checked = false;
    newOrg.checked = false;
    newText.removeAttribute("aria-invalid");
    await showMemories();
    status.textContent = "The memory is saved.";
  } catch (error) {
    if (error instanceof ApiError && error.code === "memory_disabled") offNote.hidden = false;
    else if (error instanceof ApiError && error.param === "text") newText.setAttribute("aria-invalid", "true");
    status.textContent = describe(error);
    newText.focus();
  }
});

/** How many of the person's own memories there are (the org's are not theirs to forget): every page, counted. */
async function countOwn() {
  let count = 0;
  /** @type {string | null} */
  let cursor = null;
  do {
    const query = new URLSearchParams({ limit: String(COUNT_PAGE) });
    if (cursor) query.set("cursor", cursor);
    const page = await state.api.request("GET", `/context/memories?${query}`);
    count += page.memories.filter((/** @type {any} */ m) => m.scope === "user").length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

byId("forget-all").addEventListener("click", async () => {
  status.textContent = "";
  let count;
  try {
    count = await countOwn();
  } catch (error) {
    status.textContent = describe(error);
    return;
  }
  if (count === 0) {
    status.textContent = "You have no memory of your own to forget.";
    return;
  }
  forgetText.textContent = `The agent forgets all ${count} of your ${count === 1 ? "memory" : "memories"}, for good. Your organization's memories stay.`;
  forgetDialog.returnValue = "";
  forgetDialog.showModal();
});

forgetDialog.addEventListener("close", async () => {
  const forgetAll = byId("forget-all");
  if (forgetDialog.returnValue !== "forget") {
    forgetAll.focus();
    return;
  }
  try {
    const { deleted } = await state.api.request("DELETE", "/context/memories");
    await showMemories();
    status.textContent = `Forgot ${deleted} ${deleted === 1 ? "memory" : "memories"}.`;
  } catch (error) {
    status.textContent = describe(error);
  }
  forgetAll.focus();
});

/** Opens the panel at its first page. */
export function openMemory() {
  status.textContent = "";
  dialog.showModal();
  void readPolicy();
  // Whether the org's memories can be changed here is known once the admin check is in (a moment after sign-in).
  void state.adminCheck.then((admin) => {
    newOrgLabel.hidden = !admin;
    return showMemories();
  });
}

byId("open-memory").addEventListener("click", openMemory);
byId("close-memory").addEventListener("click", () => dialog.close());

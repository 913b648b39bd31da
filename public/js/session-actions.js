// @ts-check
// A conversation's actions in the console: rename it, archive or unarchive it, export it as Markdown or JSON, and
// delete it for good after a confirmation dialog. The dialogs are the page's (#manage-dialog, #delete-dialog).
import { ApiError } from "./api.js";
import { byId, h } from "./dom.js";

/**
 * @typedef {{sessionId: string, title: string | null, titleSetByUser?: boolean, archivedAt?: string | null}} Entry
 * @typedef {{
 *   api: () => import("./api.js").ApiClient,
 *   changed: (entry: Entry) => void,
 *   deleting: (sessionId: string) => void,
 *   deleted: (sessionId: string) => Promise<void>,
 * }} SessionActionsDeps
 */

/** @param {unknown} error */
function describe(error) {
  return error instanceof ApiError ? error.message : "The server could not be reached; try again.";
}

/** Saves a blob as a file named `filename`. @param {Blob} blob @param {string} filename */
function save(blob, filename) {
  const url = URL.createObjectURL(blob);
  h("a", { href: url, download: filename }).click();
  // Some browsers still read the URL a while after the click.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Wires the dialogs; answers the function that opens them for a sidebar entry. @param {SessionActionsDeps} deps */
export function sessionActions(deps) {
  const dialog = byId("manage-dialog", HTMLDialogElement);
  const title = byId("manage-title");
  const renameForm = byId("rename-form", HTMLFormElement);
  const renameInput = byId("rename-input", HTMLInputElement);
  const status = byId("manage-status");
  const archive = byId("archive-session", HTMLButtonElement);
  const confirm = byId("delete-dialog", HTMLDialogElement);
  const confirmText = byId("delete-text");
  /** @type {Entry | null} */
  let entry = null;
  /** The element that opened the dialog, focused again when it closes. @type {HTMLElement | null} */
  let opener = null;

  /** @param {string} text @param {boolean} [isError] */
  const say = (text, isError = false) => {
    status.textContent = text;
    status.classList.toggle("error", isError);
  };

  /** @param {Entry} shown */
  const draw = (shown) => {
    entry = shown;
    // "Run this every…" (schedules.js) schedules the conversation the dialog is about.
    dialog.dataset.sessionId = shown.sessionId;
    dialog.dataset.title = shown.title ?? "";
    title.textContent = shown.title ?? "New conversation";
    renameInput.value = shown.title ?? "";
    archive.textContent = shown.archivedAt ? "Unarchive" : "Archive";
  };

  renameForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!entry) return;
    try {
      const changed = await deps.api().changeSession(entry.sessionId, { title: renameInput.value });
      draw(changed);
      deps.changed(changed);
      say("Renamed.");
    } catch (error) {
      say(describe(error), true);
    }
  });

  archive.addEventListener("click", async () => {
    if (!entry) return;
    try {
      const changed = await deps.api().changeSession(entry.sessionId, { archived: !entry.archivedAt });
      draw(changed);
      deps.changed(changed);
      say(changed.archivedAt ? "Archived: it is listed under Show archived." : "Unarchived.");
    } catch (error) {
      say(describe(error), true);
    }
  });

  for (const [id, format] of /** @type {const} */ ([
    ["export-markdown", "markdown"],
    ["export-json", "json"],
  ])) {
    byId(id).addEventListener("click", async () => {
      if (!entry) return;
      try {
        const file = await deps.api().exportSession(entry.sessionId, format);
        save(file.blob, file.filename);
        say(`Exported as ${file.filename}.`);
      } catch (error) {
        say(describe(error), true);
      }
    });
  }

  byId("delete-session").addEventListener("click", () => {
    if (!entry) return;
    confirmText.textContent = `“${entry.title ?? "New conversation"}” and everything in it (messages, tool calls, artifacts) will be deleted for good. This cannot be undone.`;
    confirm.returnValue = "";
    confirm.showModal();
  });

  confirm.addEventListener("close", async () => {
    if (confirm.returnValue !== "delete" || !entry) return;
    const { sessionId } = entry;
    try {
      deps.deleting(sessionId);
      await deps.api().deleteSession(sessionId);
      dialog.close();
      await deps.deleted(sessionId);
    } catch (error) {
      say(describe(error), true);
    }
  });

  byId("close-manage").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    if (opener?.isConnected) opener.focus();
    opener = null;
  });

  /** Opens the actions of `shown`, from the element `from` (focused again afterwards). @param {Entry} shown */
  return (shown) => {
    opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    draw(shown);
    say("");
    dialog.showModal();
    renameInput.focus();
    renameInput.select();
  };
}

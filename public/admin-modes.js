// @ts-check
// The admin page's modes editor: the modes the org sees (the deployment's and its own) in a table, and a form that
// adds one or changes one through PUT /admin/modes/:key (its tools ticked from GET /admin/tools, its route chosen
// from GET /admin/model-routes), and Delete through DELETE /admin/modes/:key. What the server refuses is shown in
// its own words above the form, which stays filled in so the admin can correct it. Below the form, the mode's versions:
// each one's diff against the current one, and a restore (docs/modes.md, Versions).
import { ApiError } from "./js/api.js";
import { byId, h } from "./js/dom.js";

/** @typedef {import("./js/api.js").ApiClient} ApiClient */
/**
 * @typedef {{ key: string, org: string | null, displayName: string, description: string, systemPrompt: string,
 *   systemPromptSummary: string, isDefault: boolean, humanRoleHints: string[] | null,
 *   exampleUtterances: string[] | null, tools: string[], approvalRequiredTools: string[], modelRoute: string,
 *   enabled: boolean, memory?: boolean }} ManagedMode
 */

const el = {
  body: byId("modes-body"),
  status: byId("modes-status"),
  newMode: byId("new-mode", HTMLButtonElement),
  form: byId("mode-editor", HTMLFormElement),
  title: byId("mode-editor-title"),
  error: byId("mode-editor-error"),
  key: byId("mode-key", HTMLInputElement),
  displayName: byId("mode-display-name", HTMLInputElement),
  description: byId("mode-editor-description", HTMLTextAreaElement),
  systemPrompt: byId("mode-system-prompt", HTMLTextAreaElement),
  tools: byId("mode-tools"),
  approvals: byId("mode-approvals"),
  route: byId("mode-route", HTMLSelectElement),
  isDefault: byId("mode-default", HTMLInputElement),
  memory: byId("mode-memory", HTMLInputElement),
  cancel: byId("mode-cancel", HTMLButtonElement),
  versions: byId("mode-versions"),
  versionsStatus: byId("mode-versions-status"),
  versionsList: byId("mode-versions-list"),
  versionDiff: byId("mode-version-diff"),
};

/** @type {ApiClient} */
let api;
/** The mode the form changes (its fields the form does not show are sent back as they are), or null: a new one. */
/** @type {ManagedMode | null} */
let editing = null;
/** @type {{ name: string, alwaysOffered: boolean }[]} */
let knownTools = [];

/** @param {string | null} org */
const whose = (org) => (org === null ? "deployment" : "your organization");

/** @param {unknown} error */
const inWords = (error) => (error instanceof ApiError ? error.message : String(error));

/** @param {string} text @param {boolean} [isError] */
function say(text, isError = false) {
  el.status.textContent = text;
  el.status.classList.toggle("error", isError);
}

/**
 * One checkbox a tool, in `fieldset` (after its legend), ticked for the names in `chosen`.
 * @param {HTMLElement} fieldset @param {string} name @param {string[]} chosen
 */
function toolBoxes(fieldset, name, chosen) {
  const legend = fieldset.querySelector("legend");
  const boxes = knownTools
    .filter((tool) => !tool.alwaysOffered)
    .map((tool) =>
      h(
        "label",
        {},
        h("input", { type: "checkbox", name, value: tool.name, checked: chosen.includes(tool.name) }),
        ` ${tool.name}`,
      ),
    );
  fieldset.replaceChildren(...(legend ? [legend] : []), ...boxes);
}

/** @param {HTMLElement} fieldset */
const ticked = (fieldset) =>
  [...fieldset.querySelectorAll("input[type=checkbox]:checked")].map(
    (box) => /** @type {HTMLInputElement} */ (box).value,
  );

/** Opens the form for `mode`, or for a new mode. @param {ManagedMode | null} mode */
function openForm(mode) {
  editing = mode;
  el.title.textContent = mode ? `Edit ${mode.displayName}` : "New mode";
  el.error.textContent = "";
  el.key.value = mode?.key ?? "";
  el.key.readOnly = mode !== null;
  el.displayName.value = mode?.displayName ?? "";
  el.description.value = mode?.description ?? "";
  el.systemPrompt.value = mode?.systemPrompt ?? "";
  toolBoxes(el.tools, "tool", mode?.tools ?? []);
  toolBoxes(el.approvals, "approval", mode?.approvalRequiredTools ?? []);
  el.route.value = mode?.modelRoute ?? "default";
  el.isDefault.checked = mode?.isDefault ?? false;
  // A mode has memory unless it was turned off (the default for a new one, and for a server that predates the flag).
  el.memory.checked = mode?.memory ?? true;
  el.form.hidden = false;
  el.versions.hidden = mode === null;
  if (mode) void loadVersions(mode);
  (mode ? el.displayName : el.key).focus();
}

/** The mode's versions path, of its owner. @param {ManagedMode} mode @param {string} [rest] */
const versionsPath = (mode, rest = "") =>
  `/admin/modes/${encodeURIComponent(mode.key)}/versions${rest}?owner=${mode.org ? "org" : "deployment"}`;

/** @param {unknown} value */
const shown = (value) => (typeof value === "string" ? value : JSON.stringify(value));

/**
 * Lists the mode's versions (docs/modes.md, Versions), newest first, each but the current one with a diff against
 * the current one and a restore.
 * @param {ManagedMode} mode
 */
async function loadVersions(mode) {
  el.versionDiff.replaceChildren();
  el.versionsStatus.textContent = "";
  try {
    const { data } = await api.request("GET", versionsPath(mode));
    el.versionsList.replaceChildren(
      ...data.map(
        (/** @type {{ version: number, createdAt: string, createdBy: string | null, current: boolean }} */ v) =>
          h(
            "li",
            { value: String(v.version), "data-version": String(v.version) },
            `Version ${v.version}, ${v.createdAt.slice(0, 16).replace("T", " ")}${v.createdBy ? ` by ${v.createdBy}` : ""}${v.current ? " (current)" : ""} `,
            v.current
              ? null
              : h("button", {
                  type: "button",
                  class: "quiet",
                  text: "Diff",
                  "aria-label": `Diff version ${v.version} against the current one`,
                  onclick: () => void showDiff(mode, v.version),
                }),
            v.current
              ? null
              : h("button", {
                  type: "button",
                  class: "quiet",
                  text: "Restore",
                  "aria-label": `Restore version ${v.version}`,
                  onclick: () => void restore(mode, v.version),
                }),
          ),
      ),
    );
  } catch (error) {
    el.versionsStatus.textContent = `Versions not read: ${inWords(error)}`;
  }
}

/** Shows what differs from `version` to the current one, field by field. @param {ManagedMode} mode @param {number} version */
async function showDiff(mode, version) {
  try {
    const { from, to, changes } = await api.request("GET", versionsPath(mode, `/${version}/diff`));
    el.versionDiff.replaceChildren(
      h("p", { text: changes.length ? `From version ${from} to ${to}:` : `Versions ${from} and ${to} are the same.` }),
      h(
        "dl",
        { class: "version-diff" },
        ...changes.flatMap((/** @type {{ field: string, before: unknown, after: unknown }} */ change) => [
          h("dt", { text: change.field }),
          h("dd", { class: "before", text: `− ${shown(change.before)}` }),
          h("dd", { class: "after", text: `+ ${shown(change.after)}` }),
        ]),
      ),
    );
  } catch (error) {
    el.versionsStatus.textContent = `No diff: ${inWords(error)}`;
  }
}

/** Writes `version`'s content as a new version. @param {ManagedMode} mode @param {number} version */
async function restore(mode, version) {
  if (!window.confirm(`Restore version ${version} of ${mode.displayName}? It becomes a new version.`)) return;
  try {
    const { mode: written } = await api.request("POST", versionsPath(mode, `/${version}/restore`));
    closeForm();
    say(`Restored version ${version} of ${written.displayName} as version ${written.version}.`);
    await loadModes();
  } catch (error) {
    el.versionsStatus.textContent = `Not restored: ${inWords(error)}`;
  }
}

function closeForm() {
  editing = null;
  el.form.hidden = true;
  el.newMode.focus();
}

/** @param {SubmitEvent} event */
async function save(event) {
  event.preventDefault();
  const key = el.key.value.trim();
  const body = {
    // The fields the form does not show keep their values.
    systemPromptSummary: editing?.systemPromptSummary ?? "",
    humanRoleHints: editing?.humanRoleHints ?? null,
    exampleUtterances: editing?.exampleUtterances ?? null,
    displayName: el.displayName.value,
    description: el.description.value,
    systemPrompt: el.systemPrompt.value,
    tools: ticked(el.tools),
    approvalRequiredTools: ticked(el.approvals),
    modelRoute: el.route.value,
    isDefault: el.isDefault.checked,
    memory: el.memory.checked,
  };
  // An org's own mode is changed as the org's; a new one is the caller's (an operator's: the deployment's).
  const owner = editing?.org ? "?owner=org" : "";
  try {
    const { mode } = await api.request("PUT", `/admin/modes/${encodeURIComponent(key)}${owner}`, body);
    closeForm();
    say(`Saved the mode ${mode.displayName} (${mode.key}).`);
    await loadModes();
  } catch (error) {
    el.error.textContent = `Not saved: ${inWords(error)}`;
    el.error.focus();
  }
}

/** @param {ManagedMode} mode */
async function remove(mode) {
  if (!window.confirm(`Delete the mode ${mode.displayName} (${mode.key})? Sessions in it go on in the default mode.`))
    return;
  try {
    await api.request(
      "DELETE",
      `/admin/modes/${encodeURIComponent(mode.key)}?owner=${mode.org ? "org" : "deployment"}`,
    );
    say(`Deleted the mode ${mode.displayName} (${mode.key}).`);
    await loadModes();
  } catch (error) {
    say(`Not deleted: ${inWords(error)}`, true);
  }
}

/** @param {ManagedMode} mode */
function modeRow(mode) {
  return h(
    "tr",
    { "data-mode-key": mode.key },
    h("td", { class: "long", text: mode.key }),
    h("td", { text: `${mode.displayName}${mode.isDefault ? " (default)" : ""}` }),
    h("td", { class: "long tool-list", text: mode.tools.join(", ") || "—" }),
    h("td", { text: mode.modelRoute }),
    h("td", { text: whose(mode.org) }),
    h("td", { text: mode.enabled ? "yes" : "hidden" }),
    h(
      "td",
      { class: "row-actions" },
      h("button", {
        type: "button",
        class: "quiet",
        text: "Edit",
        "aria-label": `Edit ${mode.displayName}`,
        onclick: () => openForm(mode),
      }),
      mode.isDefault
        ? null
        : h("button", {
            type: "button",
            class: "danger",
            text: "Delete",
            "aria-label": `Delete ${mode.displayName}`,
            onclick: () => void remove(mode),
          }),
    ),
  );
}

/** @type {(body: HTMLElement) => void} */
let labelCells = () => {};

async function loadModes() {
  const [{ modes }, { tools }, { routes }] = await Promise.all([
    api.request("GET", "/admin/modes"),
    api.request("GET", "/admin/tools"),
    api.request("GET", "/admin/model-routes"),
  ]);
  knownTools = tools;
  el.route.replaceChildren(
    ...[...new Set(routes.map((/** @type {{ name: string }} */ route) => route.name))].map((name) =>
      h("option", { value: name, text: name }),
    ),
  );
  el.body.replaceChildren(...modes.map(modeRow));
  labelCells(el.body);
}

/**
 * Shows the org's modes and wires the editor.
 * @param {ApiClient} client
 * @param {(body: HTMLElement) => void} labelTableCells names each cell's column, for the stacked rows of a phone
 */
export async function startModesEditor(client, labelTableCells) {
  api = client;
  labelCells = labelTableCells;
  el.newMode.addEventListener("click", () => openForm(null));
  el.cancel.addEventListener("click", closeForm);
  el.form.addEventListener("submit", (event) => void save(event));
  await loadModes();
}

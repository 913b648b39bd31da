// @ts-check
// The admin page's guardrails (GET/PUT /admin/guardrails): the org's list as JSON (every mode's default; a mode's
// own entry of the same name replaces one), whether the passthrough applies it, and how often each fired. A list the
// server refuses is shown with the entry and field it named, and stays in the box to be corrected. docs/guardrails.md.
import { ApiError } from "./js/api.js";
import { byId, h } from "./js/dom.js";

/** @typedef {import("./js/api.js").ApiClient} ApiClient */
/** @typedef {{guardrail: string, point: string, action: string, count: number, lastAt: string}} GuardrailCount */

/** The counters as table rows. @param {GuardrailCount[]} counts */
function countRows(counts) {
  if (counts.length === 0) return [h("tr", {}, h("td", { colspan: 5, text: "No guardrail has fired yet." }))];
  return counts.map((c) =>
    h(
      "tr",
      {},
      h("td", { text: c.guardrail }),
      h("td", { text: c.point }),
      h("td", { text: c.action }),
      h("td", { text: String(c.count) }),
      h("td", { text: new Date(c.lastAt).toLocaleString() }),
    ),
  );
}

/** Shows the org's guardrails and saves the form. @param {ApiClient} api */
export async function loadGuardrails(api) {
  const form = byId("guardrails-form", HTMLFormElement);
  const text = byId("guardrails-json", HTMLTextAreaElement);
  const passthrough = byId("guardrails-passthrough", HTMLInputElement);
  const status = byId("guardrails-status");
  const body = byId("guardrail-counts-body");
  /** @param {string} message @param {boolean} [isError] */
  const say = (message, isError = false) => {
    status.textContent = message;
    status.classList.toggle("error", isError);
    text.setAttribute("aria-invalid", String(isError));
  };
  /** @param {{guardrails: unknown[], passthrough: boolean, counts: GuardrailCount[]}} answer */
  const show = (answer) => {
    text.value = JSON.stringify(answer.guardrails, null, 2);
    passthrough.checked = answer.passthrough;
    body.replaceChildren(...countRows(answer.counts));
  };
  try {
    show(await api.request("GET", "/admin/guardrails"));
  } catch (error) {
    // The rest of the page does not depend on this section: its failure is shown here alone.
    say(`The guardrails could not be read: ${error instanceof ApiError ? error.message : String(error)}`, true);
    return;
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    /** @type {unknown} */
    let guardrails;
    try {
      guardrails = JSON.parse(text.value || "[]");
    } catch (error) {
      say(`Not saved: the list is not valid JSON (${error instanceof Error ? error.message : String(error)}).`, true);
      return;
    }
    try {
      show(await api.request("PUT", "/admin/guardrails", { guardrails, passthrough: passthrough.checked }));
      say("Saved.");
    } catch (error) {
      say(`Not saved: ${error instanceof ApiError ? error.message : String(error)}`, true);
    }
  });
}

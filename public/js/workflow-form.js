// @ts-check
// WorkflowSelector: workflows grouped by category, and a form built from a workflow's JSON schema whose
// validation comes from the server (its `param` puts the message beside the field).
import { h } from "./dom.js";

/**
 * @param {Array<{id: string, name: string, description: string, workflows: any[]}>} categories
 * @param {(workflow: any) => void} onPick
 */
export function workflowList(categories, onPick) {
  return categories
    .filter((category) => category.workflows.length > 0)
    .map((category) =>
      h(
        "section",
        { "aria-labelledby": `category-${category.id}` },
        h("h3", { id: `category-${category.id}`, text: category.name }),
        h("p", { class: "mode-description", text: category.description }),
        h(
          "ul",
          {},
          ...category.workflows.map((workflow) =>
            h(
              "li",
              {},
              h(
                "button",
                { type: "button", class: "quiet", "data-workflow-id": workflow.id, onclick: () => onPick(workflow) },
                h("strong", { text: workflow.name }),
                ` — ${workflow.description}`,
              ),
            ),
          ),
        ),
      ),
    );
}

/** The input for one schema property: a select for enums (and mode keys), a checkbox, a number or text. */
function fieldInput(name, property, id, modes) {
  const describedBy = `${id}-hint ${id}-error`;
  const options = property.enum ?? (name === "mode" && modes.length > 0 ? modes.map((mode) => mode.key) : null);
  if (options) {
    return h(
      "select",
      { id, name, "aria-describedby": describedBy },
      ...options.map((value) => h("option", { value, text: String(value) })),
    );
  }
  if (property.type === "boolean") return h("input", { id, name, type: "checkbox", "aria-describedby": describedBy });
  if (property.type === "number" || property.type === "integer") {
    return h("input", { id, name, type: "number", "aria-describedby": describedBy });
  }
  if ((property.maxLength ?? 0) > 500) return h("textarea", { id, name, rows: 3, "aria-describedby": describedBy });
  return h("input", { id, name, type: "text", autocomplete: "off", "aria-describedby": describedBy });
}

/**
 * Fills `form` for `workflow`; `onSubmit` gets the parameters (empty optional fields left out).
 * @param {HTMLFormElement} form
 * @param {any} workflow
 * @param {Array<{key: string}>} modes
 * @param {(parameters: Record<string, unknown>) => void} onSubmit
 * @param {() => void} onBack
 */
export function fillWorkflowForm(form, workflow, modes, onSubmit, onBack) {
  const schema = workflow.parameters ?? {};
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  form.replaceChildren(
    h("h3", { text: workflow.name }),
    h("p", { class: "mode-description", text: workflow.description }),
    ...Object.entries(properties).flatMap(([name, property]) => {
      const id = `wf-${workflow.id}-${name}`;
      return [
        h("label", { for: id, text: `${name}${required.has(name) ? " (required)" : ""}` }),
        fieldInput(name, property, id, modes),
        h("span", { id: `${id}-hint`, class: "mode-description", text: property.description ?? "" }),
        h("span", { id: `${id}-error`, class: "field-error", "data-field-error": name, role: "alert" }),
      ];
    }),
    h("p", { class: "error", "data-form-error": "", role: "alert" }),
    h(
      "div",
      { class: "dialog-actions" },
      h("button", { type: "button", class: "quiet", text: "Back", onclick: onBack }),
      h("button", { type: "submit", text: `Run ${workflow.name}` }),
    ),
  );
  form.noValidate = true;
  form.onsubmit = (event) => {
    event.preventDefault();
    /** @type {Record<string, unknown>} */
    const parameters = {};
    for (const [name, property] of Object.entries(properties)) {
      const input = /** @type {HTMLInputElement | null} */ (form.elements.namedItem(name));
      if (!input) continue;
      if (property.type === "boolean") parameters[name] = input.checked;
      else if (input.value === "" && !required.has(name)) continue;
      else if (property.type === "number" || property.type === "integer") parameters[name] = Number(input.value);
      else parameters[name] = input.value;
    }
    onSubmit(parameters);
  };
}

/** Shows the server's message beside the field it names (or above the buttons), and focuses that field. */
export function showWorkflowError(form, error) {
  for (const element of form.querySelectorAll("[data-field-error], [data-form-error]")) element.textContent = "";
  const field = error.param ? form.querySelector(`[data-field-error="${CSS.escape(error.param)}"]`) : null;
  if (field) {
    field.textContent = error.message;
    const input = form.elements.namedItem(error.param);
    input?.setAttribute("aria-invalid", "true");
    input?.focus();
  } else {
    const general = form.querySelector("[data-form-error]");
    if (general) general.textContent = error.message;
  }
}

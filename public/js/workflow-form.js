// @ts-check
// WorkflowSelector: workflows grouped by category, and a form built from a flat JSON schema (a workflow's
// parameters, or the fields an MCP server asks the user for) whose validation comes from the server (its
// `param` puts the message beside the field).
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

/**
 * The choices of a property as [value, label] pairs: `enum` (labelled by `enumNames`), titled `oneOf`, a
 * multi-select's `items`, or the catalog's mode keys for a `mode` field; null when it is free input.
 * @param {string} name @param {any} property @param {Array<{key: string}>} modes
 * @returns {Array<[string, string]> | null}
 */
function choices(name, property, modes) {
  const source = property.type === "array" ? (property.items ?? {}) : property;
  if (Array.isArray(source.enum)) return source.enum.map((v, i) => [String(v), String(source.enumNames?.[i] ?? v)]);
  const titled = source.oneOf ?? source.anyOf;
  if (Array.isArray(titled)) return titled.map((o) => [String(o.const), String(o.title ?? o.const)]);
  if (name === "mode" && modes.length > 0) return modes.map((mode) => [mode.key, mode.key]);
  return null;
}

/** The input for one schema property: a select for choices (several for an array), a checkbox, a number or text. */
function fieldInput(name, property, id, modes, required) {
  const describedBy = `${id}-hint ${id}-error`;
  const options = choices(name, property, modes);
  const preset = property.default;
  if (options) {
    const multiple = property.type === "array";
    const chosen = new Set((Array.isArray(preset) ? preset : preset === undefined ? [] : [preset]).map(String));
    const blank = !multiple && !required && preset === undefined ? [h("option", { value: "", text: "—" })] : [];
    return h(
      "select",
      { id, name, multiple, "aria-describedby": describedBy },
      ...blank,
      ...options.map(([value, label]) => h("option", { value, text: label, selected: chosen.has(value) })),
    );
  }
  if (property.type === "boolean") {
    return h("input", { id, name, type: "checkbox", checked: preset === true, "aria-describedby": describedBy });
  }
  const value = preset === undefined ? undefined : String(preset);
  if (property.type === "number" || property.type === "integer") {
    return h("input", {
      id,
      name,
      type: "number",
      step: property.type === "integer" ? "1" : "any",
      value,
      "aria-describedby": describedBy,
    });
  }
  const type =
    property.format === "email"
      ? "email"
      : property.format === "date"
        ? "date"
        : property.format === "uri"
          ? "url"
          : "text";
  if ((property.maxLength ?? 0) > 500)
    return h("textarea", { id, name, rows: 3, value, "aria-describedby": describedBy });
  return h("input", { id, name, type, autocomplete: "off", value, "aria-describedby": describedBy });
}

/**
 * Fills `form` with a field for each property of a flat JSON object schema, a heading, and buttons;
 * `onSubmit` gets the values (empty optional fields left out). The workflow form and the elicitation form.
 * @param {HTMLFormElement} form
 * @param {{title: string, description: string, schema: any, idPrefix: string, submitLabel: string,
 *   modes?: Array<{key: string}>, actions?: Array<{label: string, onClick: () => void}>,
 *   onSubmit: (values: Record<string, unknown>) => void}} options
 */
export function fillSchemaForm(form, options) {
  const schema = options.schema ?? {};
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const modes = options.modes ?? [];
  form.replaceChildren(
    h("h3", { text: options.title }),
    h("p", { class: "mode-description", text: options.description }),
    ...Object.entries(properties).flatMap(([name, property]) => {
      const id = `${options.idPrefix}-${name}`;
      const label = property.title ? `${property.title} (${name})` : name;
      return [
        h("label", { for: id, text: `${label}${required.has(name) ? " (required)" : ""}` }),
        fieldInput(name, property, id, modes, required.has(name)),
        h("span", { id: `${id}-hint`, class: "mode-description", text: property.description ?? "" }),
        h("span", { id: `${id}-error`, class: "field-error", "data-field-error": name, role: "alert" }),
      ];
    }),
    h("p", { class: "error", "data-form-error": "", role: "alert" }),
    h(
      "div",
      { class: "dialog-actions" },
      ...(options.actions ?? []).map((action) =>
        h("button", { type: "button", class: "quiet", text: action.label, onclick: action.onClick }),
      ),
      h("button", { type: "submit", text: options.submitLabel }),
    ),
  );
  form.noValidate = true;
  form.onsubmit = (event) => {
    event.preventDefault();
    /** @type {Record<string, unknown>} */
    const values = {};
    for (const [name, property] of Object.entries(properties)) {
      const input = /** @type {HTMLInputElement | HTMLSelectElement | null} */ (form.elements.namedItem(name));
      if (!input) continue;
      if (input instanceof HTMLSelectElement && input.multiple) {
        const picked = [...input.selectedOptions].map((option) => option.value);
        if (picked.length > 0 || required.has(name)) values[name] = picked;
      } else if (property.type === "boolean") values[name] = /** @type {HTMLInputElement} */ (input).checked;
      else if (input.value === "" && !required.has(name)) continue;
      else if (property.type === "number" || property.type === "integer") values[name] = Number(input.value);
      else values[name] = input.value;
    }
    options.onSubmit(values);
  };
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
  fillSchemaForm(form, {
    title: workflow.name,
    description: workflow.description,
    schema: workflow.parameters,
    idPrefix: `wf-${workflow.id}`,
    submitLabel: `Run ${workflow.name}`,
    modes,
    actions: [{ label: "Back", onClick: onBack }],
    onSubmit,
  });
}

/**
 * Shows the server's message beside the field it names (or above the buttons), and focuses that field.
 * @param {HTMLFormElement} form @param {{message: string, param: string | null}} error
 * @param {string} [prefix] the part of `param` before the field's name (an elicitation's "content.")
 */
export function showWorkflowError(form, error, prefix = "") {
  for (const element of form.querySelectorAll("[data-field-error], [data-form-error]")) element.textContent = "";
  const param = error.param?.startsWith(prefix) ? error.param.slice(prefix.length) : null;
  const field = param ? form.querySelector(`[data-field-error="${CSS.escape(param)}"]`) : null;
  if (field && param) {
    field.textContent = error.message;
    const input = /** @type {HTMLElement | null} */ (form.elements.namedItem(param));
    input?.setAttribute("aria-invalid", "true");
    input?.focus();
  } else {
    const general = form.querySelector("[data-form-error]");
    if (general) general.textContent = error.message;
  }
}

// @ts-check
// A tiny element builder: text always goes in as text, never as HTML.

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attributes] `class`, `text`, `on<event>` handlers, properties or attributes
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null) continue;
    if (name === "class") element.className = String(value);
    else if (name === "text") element.textContent = String(value);
    else if (name.startsWith("on") && typeof value === "function")
      element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    // Properties (value, checked, type...) as properties, so a textarea's value is its content.
    else if (name in element) element[name] = value;
    else if (value !== false) element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/**
 * The page's element `#id`, checked to be a `type` (an input, a dialog...) so its properties are typed.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T }} [type]
 * @returns {T}
 */
export function byId(id, type) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}.`);
  if (type && !(element instanceof type)) throw new Error(`#${id} is not a ${type.name}.`);
  return /** @type {T} */ (element);
}

/**
 * Pretty-prints a JSON string for people; anything that is not JSON is shown as it is.
 * @param {string | null | undefined} text
 */
export function prettyJson(text) {
  if (text === null || text === undefined) return "";
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return String(text);
  }
}

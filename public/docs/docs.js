// @ts-check
// The /docs page: the OpenAPI document of this server, rendered by Swagger UI from our own assets. The
// document needs a key (every route but /healthz does), so the page asks for one (or takes the console's,
// from this tab's session storage) and sends it with the document's request and with every "Try it out".
import { KEY_STORAGE } from "../js/api.js";

/** @typedef {{ headers: Record<string, string> }} SwaggerRequest */
/** @type {(options: Record<string, unknown>) => unknown} */
// @ts-expect-error: the bundle defines SwaggerUIBundle on window (public/vendor/swagger-ui/swagger-ui-bundle.js).
const SwaggerUIBundle = window.SwaggerUIBundle;

const form = /** @type {HTMLFormElement} */ (document.getElementById("docs-key-form"));
const input = /** @type {HTMLInputElement} */ (document.getElementById("docs-key"));
const statusLine = /** @type {HTMLElement} */ (document.getElementById("docs-status"));

/** @param {string} key */
async function load(key) {
  statusLine.textContent = "Loading…";
  const response = await fetch("/openapi.json", { headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    statusLine.textContent = body?.error?.message ?? `The server answered ${response.status}.`;
    return;
  }
  sessionStorage.setItem(KEY_STORAGE, key);
  statusLine.textContent = "";
  SwaggerUIBundle({
    spec: await response.json(),
    dom_id: "#swagger",
    // No deep links: Swagger UI puts each one, a link, inside the operation's button (a control in a control, which a
    // screen reader cannot reach; axe's nested-interactive).
    deepLinking: false,
    /** @param {SwaggerRequest} request */
    requestInterceptor: (request) => {
      request.headers.authorization = `Bearer ${key}`;
      return request;
    },
  });
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  void load(input.value.trim());
});

const stored = sessionStorage.getItem(KEY_STORAGE);
if (stored) {
  input.value = stored;
  void load(stored);
}

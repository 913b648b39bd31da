// @ts-check
// The /docs page: the OpenAPI document of this server, rendered by Swagger UI from our own assets, in the console's
// styles. The document needs a credential (every route but /healthz does): the page takes the console's, the key
// signed in with in this tab or the browser session's cookie after single sign-on, and asks for a key only when
// there is neither. The same credential goes with every "Try it out".
import { ApiClient, ApiError, KEY_STORAGE } from "../js/api.js";

/** @typedef {{ url: string, method?: string, headers: Record<string, string> }} SwaggerRequest */
/** @type {(options: Record<string, unknown>) => unknown} */
// @ts-expect-error: the bundle defines SwaggerUIBundle on window (public/vendor/swagger-ui/swagger-ui-bundle.js).
const SwaggerUIBundle = window.SwaggerUIBundle;

const form = /** @type {HTMLFormElement} */ (document.getElementById("docs-key-form"));
const input = /** @type {HTMLInputElement} */ (document.getElementById("docs-key"));
const statusLine = /** @type {HTMLElement} */ (document.getElementById("docs-status"));

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Loads the reference with `api`'s credential; false when it was refused. @param {ApiClient} api */
async function load(api) {
  statusLine.textContent = "Loading…";
  let spec;
  try {
    spec = await api.request("GET", "/openapi.json");
  } catch (error) {
    statusLine.textContent = error instanceof ApiError ? error.message : "The server could not be reached; try again.";
    return false;
  }
  if (api.apiKey) sessionStorage.setItem(KEY_STORAGE, api.apiKey);
  statusLine.textContent = api.apiKey ? "Signed in with your key." : "Signed in with your console session.";
  form.hidden = true;
  SwaggerUIBundle({
    spec,
    dom_id: "#swagger",
    // No deep links: Swagger UI puts each one, a link, inside the operation's button (a control in a control, which a
    // screen reader cannot reach; axe's nested-interactive).
    deepLinking: false,
    /** @param {SwaggerRequest} request */
    requestInterceptor: (request) => {
      // The key goes to this origin only: a "Try it out" aimed elsewhere (an absolute URL typed in) gets none.
      if (new URL(request.url, location.href).origin !== location.origin) return request;
      if (api.apiKey) request.headers.authorization = `Bearer ${api.apiKey}`;
      else if (api.csrfToken && !SAFE_METHODS.has((request.method ?? "GET").toUpperCase()))
        request.headers["x-csrf-token"] = api.csrfToken;
      return request;
    },
  });
  return true;
}

/** No credential (or a refused one): the page asks for a key. */
function askForKey() {
  form.hidden = false;
  if (!statusLine.textContent || statusLine.textContent === "Loading…")
    statusLine.textContent = "Sign in on the console first, or paste an API key here.";
  input.focus();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  void load(new ApiClient({ apiKey: input.value.trim() }));
});

async function start() {
  const stored = sessionStorage.getItem(KEY_STORAGE);
  const api = stored ? new ApiClient({ apiKey: stored }) : await ApiClient.ofBrowserSession().catch(() => null);
  if (!api || !(await load(api))) askForKey();
}

void start();

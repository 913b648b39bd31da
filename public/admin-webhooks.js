// @ts-check
// The admin page's webhook endpoints (GET /context/webhooks: the org's, and its members' own): disabled ones first,
// each with why aptix disabled it (its deliveries failed for the whole retry window, or its URL is refused), and a
// button that enables it again (PATCH). Their deliveries are read through the API (docs/webhooks.md).
import { byId, h } from "./js/dom.js";

/** @typedef {import("./js/api.js").ApiClient} ApiClient */
/**
 * @typedef {{ id: string, url: string, events: string[], enabled: boolean, disabledReason: string | null,
 *   disabledAt: string | null, scope: "org" | "user", owner: string | null }} WebhookEndpoint
 */

/**
 * Fills the section's table; `labelCells` gives each cell its column's name (the page's narrow layout).
 * @param {ApiClient} api
 * @param {(body: HTMLElement) => void} labelCells
 */
export async function loadWebhooks(api, labelCells) {
  const body = byId("webhooks-body");
  const status = byId("webhooks-status");
  /** @type {WebhookEndpoint[]} */
  let endpoints;
  try {
    ({ endpoints } = await api.request("GET", "/context/webhooks"));
  } catch (error) {
    // The rest of the page does not depend on this section: its failure is shown here alone.
    status.textContent = `Webhook endpoints could not be read: ${String(error)}`;
    status.classList.add("error");
    return;
  }
  const disabled = endpoints.filter((e) => !e.enabled);
  status.textContent =
    disabled.length === 0
      ? `${endpoints.length} endpoint${endpoints.length === 1 ? "" : "s"}, none disabled.`
      : `${disabled.length} endpoint${disabled.length === 1 ? " is" : "s are"} disabled: nothing is delivered to ${disabled.length === 1 ? "it" : "them"} until enabled again.`;
  status.classList.toggle("error", disabled.length > 0);
  const ordered = [...disabled, ...endpoints.filter((e) => e.enabled)];
  body.replaceChildren(
    ...ordered.map((endpoint) =>
      h(
        "tr",
        {},
        h("td", { text: endpoint.url }),
        h("td", { text: endpoint.events.join(", ") }),
        h("td", { text: endpoint.scope === "org" ? "organization" : (endpoint.owner ?? "") }),
        endpoint.enabled
          ? h("td", { text: "enabled" })
          : h(
              "td",
              { class: "error" },
              `Disabled ${endpoint.disabledAt?.replace("T", " ").slice(0, 16) ?? ""}: ${endpoint.disabledReason ?? "by a person"} `,
              h("button", {
                type: "button",
                class: "quiet",
                text: "Enable again",
                onclick: async () => {
                  await api.request("PATCH", `/context/webhooks/${endpoint.id}`, { enabled: true });
                  await loadWebhooks(api, labelCells);
                },
              }),
            ),
      ),
    ),
  );
  if (endpoints.length === 0) body.replaceChildren(h("tr", {}, h("td", { colspan: 4, text: "No webhook endpoints." })));
  labelCells(body);
}

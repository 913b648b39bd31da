// @ts-check
// The admin page's memory switch (GET/PUT /admin/memory): whether the org's people have memories the agent keeps
// and uses. A mode can still turn memory off for itself (the mode editor's checkbox). docs/memory.md.
import { ApiError } from "./js/api.js";
import { byId } from "./js/dom.js";

/** @typedef {import("./js/api.js").ApiClient} ApiClient */

/** Shows the org's switch and saves each change. @param {ApiClient} api */
export async function loadMemorySwitch(api) {
  const box = byId("memory-enabled", HTMLInputElement);
  const status = byId("memory-admin-status");
  /** @param {string} text @param {boolean} [isError] */
  const say = (text, isError = false) => {
    status.textContent = text;
    status.classList.toggle("error", isError);
  };
  try {
    const { enabled } = await api.request("GET", "/admin/memory");
    box.checked = enabled;
  } catch (error) {
    // The rest of the page does not depend on this section: its failure is shown here alone.
    box.disabled = true;
    say(`The memory setting could not be read: ${error instanceof ApiError ? error.message : String(error)}`, true);
    return;
  }
  box.addEventListener("change", async () => {
    const enabled = box.checked;
    box.disabled = true;
    try {
      await api.request("PUT", "/admin/memory", { enabled });
      say(enabled ? "Memory is on for the organization." : "Memory is off: the agent saves and uses no memory.");
    } catch (error) {
      box.checked = !enabled;
      say(`Not saved: ${error instanceof ApiError ? error.message : String(error)}`, true);
    } finally {
      box.disabled = false;
    }
  });
}

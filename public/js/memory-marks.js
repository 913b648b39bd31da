// @ts-check
// Marks in a conversation where the agent saved a memory: after a `memory_save` call's result, "Saved to memory: …"
// (or "Memory updated: …") with Undo. Undo of a memory added deletes it; of one updated, puts its text back as it
// was (the result's `previous`). The result is the tool's `{outcome, memory, previous}`, read from the conversation,
// so a redraw or a reload draws the mark again; an undo on this page is remembered by the call's id.
import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { describe, say } from "./status.js";
import { state } from "./store.js";

export const MEMORY_SAVE = "memory_save";

/**
 * The saved memory a `memory_save` result tells of, or null (an error, a result cut short, another shape).
 * @param {string | null} content
 * @returns {{outcome: "added" | "updated", memory: {id: string, text: string}, previous: string | null} | null}
 */
export function savedMemory(content) {
  let result;
  try {
    result = JSON.parse(content ?? "");
  } catch {
    return null;
  }
  const memory = result?.memory;
  if (result?.outcome !== "added" && result?.outcome !== "updated") return null;
  if (typeof memory?.id !== "string" || typeof memory?.text !== "string") return null;
  return { outcome: result.outcome, memory, previous: typeof result.previous === "string" ? result.previous : null };
}

/**
 * The mark drawn after a successful `memory_save` call's result. @param {string} callId
 * @param {NonNullable<ReturnType<typeof savedMemory>>} saved
 */
export function memoryMarkItem(callId, saved) {
  const updated = saved.outcome === "updated";
  const label = updated ? "Memory updated" : "Saved to memory";
  const undone = state.undoneMemories.has(callId);
  const text = h("span", { class: "memory-mark-text" }, h("strong", { text: `${label}: ` }), saved.memory.text);
  const item = h("li", {
    class: `message memory-mark${undone ? " undone" : ""}`,
    "data-memory-id": saved.memory.id,
    "data-tool-call-id": callId,
  });
  item.append(text);
  if (undone) {
    item.append(
      h("span", {
        class: "memory-mark-undone",
        text: updated ? "Undone: the old text is back." : "Undone: forgotten.",
      }),
    );
    return item;
  }
  const undo = h("button", {
    type: "button",
    class: "quiet",
    text: "Undo",
    "aria-label": `Undo: ${label.toLowerCase()} “${saved.memory.text.slice(0, 60)}”`,
  });
  undo.addEventListener("click", async () => {
    undo.disabled = true;
    const path = `/context/memories/${encodeURIComponent(saved.memory.id)}`;
    try {
      if (updated && saved.previous !== null) await state.api.request("PATCH", path, { text: saved.previous });
      else await state.api.request("DELETE", path);
    } catch (error) {
      // Already gone (deleted in the panel, say): there is nothing left to undo.
      if (!(error instanceof ApiError && error.status === 404)) {
        undo.disabled = false;
        say(`Could not undo: ${describe(error)}`, true);
        return;
      }
    }
    state.undoneMemories.add(callId);
    const redrawn = memoryMarkItem(callId, saved);
    item.replaceWith(redrawn);
    // The button is gone: the focus stays on the mark, not the page's start.
    redrawn.tabIndex = -1;
    redrawn.focus();
    say(updated ? `The memory is back to “${saved.previous}”.` : "The agent forgot it.");
  });
  item.append(undo);
  return item;
}
